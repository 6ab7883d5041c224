# bench/plot: gnuplot paper_fig11.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 1 1.67554 2.24815
"compiled" 1 1.69835 2.14757
"ort" 1 1.96368 2.2235
"torch" 1 1.59536 2.0432
"MACs" 1 2.01963 2.25414
EOD
set title "Figure 11: latency relative to resnet18 at batch 1"
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
set yrange [*:4.50828]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig11.png'
plot $d using 2:xtic(1) title "resnet18" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "resnet34" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "resnet50" lc rgb '#d62728'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig11.svg'
plot $d using 2:xtic(1) title "resnet18" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "resnet34" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "resnet50" lc rgb '#d62728'
unset output
