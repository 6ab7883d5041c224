# bench/plot: gnuplot fig3_kernel_bert_L4_H256_s128.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 15.7807
4 77.4672
16 555.591
EOD
$d1 << EOD
1 15.3822
4 77.0248
16 548.615
EOD
$d2 << EOD
1 14.4298
4 88.4922
16 273.658
EOD
$d3 << EOD
1 15.232
4 68.0224
16 278.468
EOD
set title "Total vs kernel time: bert_L4_H256, seq 128, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:20]
set yrange [9.61987:833.387]
set xtics ("1" 1, "4" 4, "16" 16)
set ytics ("10" 10, "20" 20, "50" 50, "100" 100, "200" 200, "500" 500)
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
