# bench/plot: gnuplot paper_fig12.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 1 0.296323 0.561291 0.524576
"compiled" 1 0.232827 0.493386 0.369683
"ort" 1 0.210326 0.460573 0.352155
"torch" 1 0.291008 0.748462 0.45877
"MACs" 1 0.165801 0.451429 0.212679
EOD
set title "Figure 12: latency relative to resnet18 at batch 1"
set ylabel "latency / latency of resnet18"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:4.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set logscale y
set yrange [*:2]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig12.png'
plot $d using 2:xtic(1) title "resnet18" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "mobilenet_v2" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "squeezenet" lc rgb '#d62728', \
     $d using 5:xtic(1) title "efficientnet_b0" lc rgb '#2ca02c'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig12.svg'
plot $d using 2:xtic(1) title "resnet18" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "mobilenet_v2" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "squeezenet" lc rgb '#d62728', \
     $d using 5:xtic(1) title "efficientnet_b0" lc rgb '#2ca02c'
unset output
