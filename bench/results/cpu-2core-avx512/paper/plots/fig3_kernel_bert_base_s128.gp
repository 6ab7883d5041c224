# bench/plot: gnuplot fig3_kernel_bert_base_s128.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
1 236.95
2 472.444
4 945.36
8 1875.49
16 3852.02
32 7766.43
EOD
$d1 << EOD
1 235.835
2 470.837
4 943.293
8 1872.59
16 3848.32
32 7761.64
EOD
$d2 << EOD
1 224.895
2 466.999
4 905.79
8 1822.0
16 3669.02
32 7201.08
EOD
$d3 << EOD
1 226.621
2 470.618
4 906.137
8 1863.79
16 3762.12
32 7562.71
EOD
set title "Total vs kernel time: bert_base, seq 128, 1 thread"
set xlabel 'batch size'
set ylabel "time per run (ms)"
set logscale xy
set xrange [0.8:40]
set yrange [149.93:11649.6]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32)
set ytics ("200" 200, "500" 500, "1000" 1000, "2000" 2000, "5000" 5000, "10000" 10000)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig3_kernel_bert_base_s128.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig3_kernel_bert_base_s128.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "ftax-eager: total", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 2 pt 6 ps 1.2 title "ftax-eager: kernels", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled: total", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 4 ps 1.2 title "compiled, no fusion: total"
unset output
