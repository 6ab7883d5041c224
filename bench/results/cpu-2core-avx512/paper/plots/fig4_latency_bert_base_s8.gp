# bench/plot: gnuplot fig4_latency_bert_base_s8.gp (run from the folder above plots/)
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
1 21.1953
2 34.5438
4 59.3105
8 114.689
16 219.098
32 450.57
EOD
$d2 << EOD
1 21.4244
2 34.4093
4 58.9893
8 119.162
16 226.701
32 456.803
EOD
$d3 << EOD
1 9.21473
2 15.2292
4 28.8355
8 56.4654
16 110.824
32 230.106
EOD
$d4 << EOD
1 25.5188
2 35.0201
4 60.923
8 114.989
16 218.488
32 432.03
EOD
$d5 << EOD
1 26.7295
2 36.9981
4 62.8223
8 116.832
16 223.907
32 439.747
EOD
$d6 << EOD
1 59.7567
2 74.5096
4 97.2653
8 156.284
16 269.309
32 505.06
EOD
$d7 << EOD
1 56.5652
2 73.4761
4 99.8413
8 157.349
16 268.331
32 489.312
EOD
set title "Latency vs batch size: bert_base, seq 8, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:40]
set yrange [6.14315:757.59]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32)
set ytics ("10" 10, "20" 20, "50" 50, "100" 100, "200" 200, "500" 500)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_bert_base_s8.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d7 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_bert_base_s8.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d7 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
unset output
