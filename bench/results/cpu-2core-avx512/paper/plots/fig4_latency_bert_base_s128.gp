# bench/plot: gnuplot fig4_latency_bert_base_s128.gp (run from the folder above plots/)
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
1 224.895
2 466.999
4 905.79
8 1822.0
16 3669.02
32 7201.08
EOD
$d2 << EOD
1 226.621
2 470.618
4 906.137
8 1863.79
16 3762.12
32 7562.71
EOD
$d3 << EOD
1 220.291
2 444.177
4 879.874
8 1768.56
16 3657.92
32 7807.03
EOD
$d4 << EOD
1 227.152
2 448.142
4 888.285
8 1769.37
16 3718.43
32 7838.98
EOD
$d5 << EOD
1 276.713
2 503.666
4 999.011
8 2239.67
16 3894.57
32 8451.76
EOD
$d6 << EOD
1 266.271
2 509.4
4 967.163
8 1947.37
16 3846.68
32 8200.53
EOD
set title "Latency vs batch size: bert_base, seq 128, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:40]
set yrange [146.861:12677.6]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32)
set ytics ("200" 200, "500" 500, "1000" 1000, "2000" 2000, "5000" 5000, "10000" 10000)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_bert_base_s128.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_bert_base_s128.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
unset output
