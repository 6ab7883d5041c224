# bench/plot: gnuplot fig3_kernel_resnet50.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 76.0997
2 156.217
4 323.25
8 615.36
16 1269.31
32 2639.96
EOD
$d1 << EOD
1 75.8361
2 155.812
4 322.708
8 614.541
16 1267.97
32 2638.34
EOD
$d2 << EOD
1 74.0269
2 154.423
4 307.851
8 614.25
16 1259.17
32 2454.3
EOD
$d3 << EOD
1 73.9469
2 148.936
4 307.393
8 619.389
16 1216.31
32 2495.29
EOD
set title "Total vs kernel time: resnet50, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:40]
set yrange [49.2979:3959.94]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32)
set ytics ("50" 50, "100" 100, "200" 200, "500" 500, "1000" 1000, "2000" 2000)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig3_kernel_resnet50.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig3_kernel_resnet50.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
unset output
