# bench/plot: gnuplot fig4_latency_bert_L4_H256_s8.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 0.720126
4 2.77289
16 10.0356
EOD
$d1 << EOD
1 0.565146
4 2.23699
16 9.02
EOD
$d2 << EOD
1 0.307828
4 1.21467
16 5.00495
EOD
$d3 << EOD
1 0.841166
4 2.36503
16 8.93354
EOD
$d4 << EOD
1 3.3588
4 4.93475
16 13.0772
EOD
set title "Latency vs batch size: bert_L4_H256, seq 8, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:20]
set yrange [0.205219:19.6158]
set xtics ("1" 1, "4" 4, "16" 16)
set ytics ("0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_bert_L4_H256_s8.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_bert_L4_H256_s8.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch"
unset output
