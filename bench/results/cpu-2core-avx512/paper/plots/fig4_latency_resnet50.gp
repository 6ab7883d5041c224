# bench/plot: gnuplot fig4_latency_resnet50.gp (run from the folder above plots/)
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
1 74.0269
2 154.423
4 307.851
8 614.25
16 1259.17
32 2454.3
EOD
$d2 << EOD
1 73.9469
2 148.936
4 307.393
8 619.389
16 1216.31
32 2495.29
EOD
$d3 << EOD
1 53.7796
2 112.241
4 230.637
8 478.58
16 975.994
32 2015.95
EOD
$d4 << EOD
1 75.7434
2 152.958
4 295.704
8 613.971
16 1185.35
32 2367.83
EOD
$d5 << EOD
1 93.8153
2 188.909
4 372.366
8 763.466
16 1541.76
32 3008.86
EOD
$d6 << EOD
1 102.515
2 195.48
4 435.59
8 810.949
16 1957.33
32 5007.36
EOD
$d7 << EOD
1 97.198
2 188.918
4 398.769
8 772.227
16 1837.71
32 4045.76
EOD
set title "Latency vs batch size: resnet50, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:40]
set yrange [35.8531:7511.04]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32)
set ytics ("50" 50, "100" 100, "200" 200, "500" 500, "1000" 1000, "2000" 2000, "5000" 5000)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_resnet50.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d7 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_resnet50.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 6 ps 1.2 title "compiled_bf16", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d7 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
unset output
