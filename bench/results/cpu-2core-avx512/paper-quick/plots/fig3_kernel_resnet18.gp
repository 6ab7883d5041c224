# bench/plot: gnuplot fig3_kernel_resnet18.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 33.4682
4 118.578
EOD
$d1 << EOD
1 33.371
4 118.277
EOD
$d2 << EOD
1 34.0808
4 116.064
EOD
set title "Total vs kernel time: resnet18, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:5]
set yrange [22.2473:177.867]
set xtics ("1" 1, "4" 4)
set ytics ("30" 30, "40" 40, "50" 50, "60" 60, "80" 80, "100" 100, "150" 150.0)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig3_kernel_resnet18.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig3_kernel_resnet18.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total"
unset output
