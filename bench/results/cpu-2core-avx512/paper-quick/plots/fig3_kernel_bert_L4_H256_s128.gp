# bench/plot: gnuplot fig3_kernel_bert_L4_H256_s128.gp (run from the folder above plots/)
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
1 10.3115
4 43.7043
16 185.246
EOD
$d2 << EOD
1 9.732
4 39.2167
16 186.59
EOD
$d3 << EOD
1 9.9297
4 41.0787
16 178.435
EOD
set title "Total vs kernel time: bert_L4_H256, seq 128, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:20]
set yrange [6.488:279.885]
set xtics ("1" 1, "4" 4, "16" 16)
set ytics ("10" 10, "20" 20, "50" 50, "100" 100, "200" 200)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig3_kernel_bert_L4_H256_s128.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig3_kernel_bert_L4_H256_s128.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
unset output
