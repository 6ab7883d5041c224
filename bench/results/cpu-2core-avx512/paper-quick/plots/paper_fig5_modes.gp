# bench/plot: gnuplot paper_fig5_modes.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"bert_L4_H256 s8 b1" 0.2144 0.168258 ? 0.0916482 0.250436 ? 1 ?
"bert_L4_H256 s8 b16" 0.767412 0.68975 ? 0.382723 0.683139 ? 1 ?
"bert_L4_H256 s128 b1" 0.770567 0.712502 0.726977 ? 0.73369 0.794076 1 1.04283
"bert_L4_H256 s128 b16" 0.962697 0.966192 0.923964 ? 0.832772 0.872876 1 0.953226
"resnet18 b1" 0.691556 0.704214 ? 0.642547 0.699342 ? 1 ?
"resnet18 b4" 0.637465 0.62395 ? 0.576346 0.706249 ? 1 ?
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
set yrange [*:2.08566]
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
