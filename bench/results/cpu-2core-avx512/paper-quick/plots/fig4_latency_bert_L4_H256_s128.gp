# bench/plot: gnuplot fig4_latency_bert_L4_H256_s128.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 10.5251
4 44.0541
16 185.915
EOD
$d1 << EOD
1 9.732
4 39.2167
16 186.59
EOD
$d2 << EOD
1 9.9297
4 41.0787
16 178.435
EOD
$d3 << EOD
1 10.0214
4 38.6035
16 160.824
EOD
$d4 << EOD
1 10.8462
4 39.7495
16 168.569
EOD
$d5 << EOD
1 13.6589
4 45.2617
16 193.119
EOD
$d6 << EOD
1 14.2439
4 50.4722
16 184.086
EOD
set title "Latency vs batch size: bert_L4_H256, seq 128, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:20]
set yrange [6.488:289.678]
set xtics ("1" 1, "4" 4, "16" 16)
set ytics ("10" 10, "20" 20, "50" 50, "100" 100, "200" 200)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_bert_L4_H256_s128.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_bert_L4_H256_s128.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
unset output
