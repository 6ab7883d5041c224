# bench/plot: gnuplot paper_fig13.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"eager" 1
"compiled" 1
"ort" 1
"torch" 1
"MACs" 1
EOD
set title "Figure 13: latency relative to wavlm_base at batch 1"
set ylabel "latency / latency of wavlm_base"
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
set output 'paper_fig13.png'
plot $d using 2:xtic(1) title "wavlm_base" lc rgb '#7f7f7f'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig13.svg'
plot $d using 2:xtic(1) title "wavlm_base" lc rgb '#7f7f7f'
unset output
