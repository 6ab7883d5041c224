# bench/plot: gnuplot fig3_kernel_bert_L4_H256_s8.gp (run from the folder above plots/)
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
1 0.595558
4 2.60479
16 9.82133
EOD
$d2 << EOD
1 0.565146
4 2.23699
16 9.02
EOD
set title "Total vs kernel time: bert_L4_H256, seq 8, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:20]
set yrange [0.376764:15.0534]
set xtics ("1" 1, "4" 4, "16" 16)
set ytics ("0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig3_kernel_bert_L4_H256_s8.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig3_kernel_bert_L4_H256_s8.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total"
unset output
