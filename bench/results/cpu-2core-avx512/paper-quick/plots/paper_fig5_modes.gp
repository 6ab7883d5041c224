# bench/plot: gnuplot paper_fig5_modes.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"bert_L4_H256 s8 b1" 0.0262861 0.0166907 ? 0.00747971 0.0403067 ? 1 ?
"bert_L4_H256 s8 b16" 0.036242 0.0335334 ? 0.00786983 0.0351675 ? 1 ?
"bert_L4_H256 s128 b1" 0.0249949 0.0228552 0.0241258 ? 0.0237232 0.0193732 1 0.835271
"bert_L4_H256 s128 b16" 1 0.492553 0.50121 ? 0.466624 0.572164 ? ?
"resnet18 b1" 1.27076 1.38488 ? 0.374314 1.05226 ? 1 ?
"resnet18 b4" 0.486935 0.888312 ? 0.245104 0.704496 ? 1 ?
EOD
set title "Framework optimizations: latency relative to PyTorch eager (1 thread)"
set ylabel "latency / PyTorch eager"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:5.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set logscale y
set yrange [*:2.76976]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig5_modes.png'
plot $d using 2:xtic(1) title "eager" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "compiled" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "compiled_nofuse" lc rgb '#d62728', \
     $d using 5:xtic(1) title "compiled_bf16" lc rgb '#2ca02c', \
     $d using 6:xtic(1) title "ort" lc rgb '#9467bd', \
     $d using 7:xtic(1) title "ort_noopt" lc rgb '#ff7f0e', \
     $d using 8:xtic(1) title "torch" lc rgb '#8c564b', \
     $d using 9:xtic(1) title "torchscript" lc rgb '#17becf'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig5_modes.svg'
plot $d using 2:xtic(1) title "eager" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "compiled" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "compiled_nofuse" lc rgb '#d62728', \
     $d using 5:xtic(1) title "compiled_bf16" lc rgb '#2ca02c', \
     $d using 6:xtic(1) title "ort" lc rgb '#9467bd', \
     $d using 7:xtic(1) title "ort_noopt" lc rgb '#ff7f0e', \
     $d using 8:xtic(1) title "torch" lc rgb '#8c564b', \
     $d using 9:xtic(1) title "torchscript" lc rgb '#17becf'
unset output
