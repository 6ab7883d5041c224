# bench/plot: gnuplot fig4_latency_bert_L4_H256_s128.gp (run from the folder above plots/)
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
1 14.4298
4 88.4922
16 273.658
EOD
$d2 << EOD
1 15.232
4 68.0224
16 278.468
EOD
$d3 << EOD
1 14.9778
4 63.0076
16 259.252
EOD
$d4 << EOD
1 12.2314
4 70.9729
16 317.889
EOD
$d5 << EOD
1 631.357
4 2215.0
EOD
$d6 << EOD
1 527.354
4 1965.6
EOD
set title "Latency vs batch size: bert_L4_H256, seq 128, 1 thread"
set xlabel 'batch size'
set ylabel "median latency (ms)"
set logscale xy
set xrange [0.8:20]
set yrange [8.15427:3322.5]
set xtics ("1" 1, "4" 4, "16" 16)
set ytics ("10" 10, "20" 20, "50" 50, "100" 100, "200" 200, "500" 500, "1000" 1000, "2000" 2000)
set mytics 10
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'fig4_latency_bert_L4_H256_s128.png'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'fig4_latency_bert_L4_H256_s128.svg'
plot $d0 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 ps 1.2 title "eager", \
     $d1 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 5 ps 1.2 title "compiled", \
     $d2 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 4 ps 1.2 title "compiled_nofuse", \
     $d3 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 ps 1.2 title "ort", \
     $d4 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 8 ps 1.2 title "ort_noopt", \
     $d5 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 11 ps 1.2 title "torch", \
     $d6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 10 ps 1.2 title "torchscript"
unset output
