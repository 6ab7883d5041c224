# bench/plot: gnuplot fig3_kernel_bert_base_s8.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 21.4727
2 36.2954
4 62.5723
8 119.355
16 232.125
32 456.874
EOD
$d1 << EOD
1 20.8777
2 35.595
4 61.8177
8 118.449
16 230.887
32 455.308
EOD
$d2 << EOD
1 21.1953
2 34.5438
4 59.3105
8 114.689
16 219.098
32 450.57
EOD
$d3 << EOD
1 21.4244
2 34.4093
4 58.9893
8 119.162
16 226.701
32 456.803
EOD
set title "Total vs kernel time: bert_base, seq 8, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:40]
set yrange [13.9185:685.311]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32)
set ytics ("20" 20, "50" 50, "100" 100, "200" 200, "500" 500)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig3_kernel_bert_base_s8.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig3_kernel_bert_base_s8.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
unset output
