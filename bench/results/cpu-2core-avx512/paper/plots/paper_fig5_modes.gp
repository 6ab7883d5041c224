# bench/plot: gnuplot paper_fig5_modes.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"bert_base s8 b1" 0.359335 0.354693 0.358527 0.154204 0.427045 0.447305 1 0.946592
"bert_base s8 b32" 0.904594 0.892112 0.904453 0.455601 0.855403 0.870683 1 0.96882
"bert_base s128 b1" 0.856302 0.812737 0.818975 ? 0.796099 0.820894 1 0.962264
"bert_base s128 b32" 0.918913 0.852021 0.894809 ? 0.923716 0.927497 1 0.970275
"resnet50 b1" 0.742327 0.722108 0.721328 0.524602 0.738852 0.915137 1 0.948134
"resnet50 b32" 0.527216 0.490139 0.498324 0.402597 0.47287 0.600887 1 0.807963
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
set yrange [*:2]
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
