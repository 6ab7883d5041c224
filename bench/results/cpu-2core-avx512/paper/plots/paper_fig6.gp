# bench/plot: gnuplot paper_fig6.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 1 2.03465 4.11886 0.514906
"compiled" 1 2.00776 4.14013 0.512995
"ort" 1 2.03918 3.90819 0.527021
"torch" 1 1.99833 3.95178 0.517283
"MACs" 1 1.99995 3.94595 0.499974
EOD
set title "Figure 6: latency relative to bert_base at batch 1"
set ylabel "latency / latency of bert_base"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:4.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set logscale y
set yrange [*:8.28026]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig6.png'
plot $d using 2:xtic(1) title "bert_base" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "bert_L24_H768" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "bert_L12_H1536" lc rgb '#d62728', \
     $d using 5:xtic(1) title "distilbert" lc rgb '#2ca02c'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig6.svg'
plot $d using 2:xtic(1) title "bert_base" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "bert_L24_H768" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "bert_L12_H1536" lc rgb '#d62728', \
     $d using 5:xtic(1) title "distilbert" lc rgb '#2ca02c'
unset output
