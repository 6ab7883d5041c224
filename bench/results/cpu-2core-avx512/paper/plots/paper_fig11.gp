# bench/plot: gnuplot paper_fig11.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 0.40026 0.746473 1.80227 4.97934 1
"compiled" 0.422253 0.78232 1.76494 4.97152 1
"ort" 0.450541 0.887152 1.88189 4.70642 1
"torch" 0.461977 0.812374 1.82138 4.11299 1
"MACs" 0.443627 0.895964 1.90781 4.29519 1
EOD
set title "Figure 11: latency relative to resnet50 at batch 1"
set ylabel "latency / latency of resnet50"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:4.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set logscale y
set yrange [*:9.95868]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig11.png'
plot $d using 2:xtic(1) title "resnet18" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "resnet34" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "resnet101" lc rgb '#d62728', \
     $d using 5:xtic(1) title "vit_b_16" lc rgb '#2ca02c', \
     $d using 6:xtic(1) title "resnet50" lc rgb '#9467bd'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig11.svg'
plot $d using 2:xtic(1) title "resnet18" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "resnet34" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "resnet101" lc rgb '#d62728', \
     $d using 5:xtic(1) title "vit_b_16" lc rgb '#2ca02c', \
     $d using 6:xtic(1) title "resnet50" lc rgb '#9467bd'
unset output
