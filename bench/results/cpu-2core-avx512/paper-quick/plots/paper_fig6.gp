# bench/plot: gnuplot paper_fig6.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 1 2.06525 3.53187 0.500783
"compiled" 1 1.99018 3.53993 0.488847
"ort" 1 1.97081 3.53491 0.47631
"torch" 1 1.96705 3.3621 0.473384
"MACs" 1 1.99985 3.84618 0.500075
EOD
set title "Figure 6: latency relative to bert_L4_H256 at batch 1"
set ylabel "latency / latency of bert_L4_H256"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:4.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set logscale y
set yrange [*:7.69236]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444' front
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig6.png'
plot $d using 2:xtic(1) title "bert_L4_H256" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "bert_L8_H256" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "bert_L4_H512" lc rgb '#d62728', \
     $d using 5:xtic(1) title "bert_L2_H256" lc rgb '#2ca02c'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig6.svg'
plot $d using 2:xtic(1) title "bert_L4_H256" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "bert_L8_H256" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "bert_L4_H512" lc rgb '#d62728', \
     $d using 5:xtic(1) title "bert_L2_H256" lc rgb '#2ca02c'
unset output
