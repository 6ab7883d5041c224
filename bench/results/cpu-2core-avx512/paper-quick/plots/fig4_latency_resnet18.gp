# bench/plot: gnuplot fig4_latency_resnet18.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 33.4682
4 118.578
EOD
$d1 << EOD
1 34.0808
4 116.064
EOD
$d2 << EOD
1 31.0964
4 107.209
EOD
$d3 << EOD
1 33.845
4 131.373
EOD
$d4 << EOD
1 48.3955
4 186.015
EOD
set title "Latency vs batch size: resnet18, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:5]
set yrange [20.7309:279.022]
set xtics ("1" 1, "4" 4)
set ytics ("30" 30, "40" 40, "50" 50, "60" 60, "80" 80, "100" 100, "150" 150.0, "200" 200)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_resnet18.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_resnet18.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch"
unset output
