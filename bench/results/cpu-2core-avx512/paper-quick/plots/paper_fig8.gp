# bench/plot: gnuplot paper_fig8.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 1 0.490148 1.98359
"compiled" 1 0.551637 2.05821
"ort" 1 0.520387 2.06093
"torch" 1 0.566946 1.99572
"MACs" 1 0.365366 2.05759
EOD
set title "Figure 8: latency relative to bert_L12_H256 at batch 1"
set ylabel "latency / latency of bert_L12_H256"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:4.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set logscale y
set yrange [*:4.12186]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig8.png'
plot $d using 2:xtic(1) title "bert_L12_H256" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "squeezebert_H256" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "mobilebert" lc rgb '#d62728'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig8.svg'
plot $d using 2:xtic(1) title "bert_L12_H256" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "squeezebert_H256" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "mobilebert" lc rgb '#d62728'
unset output
