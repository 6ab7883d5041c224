# bench/plot: gnuplot paper_fig1_macs.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
0.300774272 10.0279
0.385814752 17.8107
0.818924576 18.6961
1.814073344 30.4597
2.692743168 62.5515
3.663761408 56.8064
3.699376128 85.3133
4.089184256 76.0997
5.586812928 122.007
7.80140544 137.152
8.457289728 181.19
11.17421568 236.95
14.011716608 340.545
17.563828224 378.926
22.347841536 482.111
44.092882944 975.964
EOD
$d1 << EOD
0.300774272 8.45538
0.385814752 13.0319
0.818924576 17.2031
1.814073344 31.2581
2.692743168 59.2853
3.663761408 57.9127
3.699376128 86.9528
4.089184256 74.0269
5.586812928 115.37
7.80140544 130.653
8.457289728 172.668
11.17421568 224.895
14.011716608 317.825
17.563828224 368.026
22.347841536 451.535
44.092882944 931.095
EOD
$d2 << EOD
0.300774272 7.75113
0.385814752 12.6914
0.818924576 15.7425
1.814073344 34.1255
2.692743168 59.6406
3.663761408 67.1959
3.699376128 88.3344
4.089184256 75.7434
5.586812928 116.098
7.80140544 142.541
8.457289728 174.728
11.17421568 220.291
14.011716608 294.102
17.563828224 356.48
22.347841536 449.214
44.092882944 860.939
EOD
$d3 << EOD
0.300774272 13.9974
0.385814752 21.8704
0.818924576 37.1756
1.814073344 47.3596
2.692743168 77.4479
3.663761408 83.2805
3.699376128 114.587
4.089184256 102.515
5.586812928 143.139
7.80140544 186.719
8.457289728 225.149
11.17421568 276.713
14.011716608 368.763
17.563828224 421.643
22.347841536 552.963
44.092882944 1093.51
EOD
set title "Latency vs multiply-accumulates at batch 1 (text at seq 128), 1 thread"
set xlabel 'GMACs'
set ylabel 'median latency (ms)'
set logscale xy
set xrange [0.200516:66.1393]
set yrange [5.16742:1640.26]
set format x '%g'
set format y '%g'
set label "mobilenet_v2" at 0.300774,8.45538 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "efficientnet_b0" at 0.385815,13.0319 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "squeezenet" at 0.818925,17.2031 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet18" at 1.81407,31.2581 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "mobilebert" at 2.69274,59.2853 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet34" at 3.66376,57.9127 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "squeezebert" at 3.69938,86.9528 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet50" at 4.08918,74.0269 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "distilbert" at 5.58681,115.37 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet101" at 7.80141,130.653 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "funnel_small" at 8.45729,172.668 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_base" at 11.1742,224.895 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "wavlm_base" at 14.0117,317.825 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "vit_b_16" at 17.5638,368.026 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L24_H768" at 22.3478,451.535 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L12_H1536" at 44.0929,931.095 offset 0.5,0.6 font ',8' tc rgb '#555555'
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig1_macs.png'
plot $d0 using 1:2 with points lw 2 lc rgb '#d62728' pt 7 ps 1.5 title "eager", \
     $d1 using 1:2 with points lw 2 lc rgb '#1f77b4' pt 5 ps 1.5 title "compiled", \
     $d2 using 1:2 with points lw 2 lc rgb '#2ca02c' pt 9 ps 1.5 title "ort", \
     $d3 using 1:2 with points lw 2 lc rgb '#ff7f0e' pt 11 ps 1.5 title "torch"
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig1_macs.svg'
plot $d0 using 1:2 with points lw 2 lc rgb '#d62728' pt 7 ps 1.5 title "eager", \
     $d1 using 1:2 with points lw 2 lc rgb '#1f77b4' pt 5 ps 1.5 title "compiled", \
     $d2 using 1:2 with points lw 2 lc rgb '#2ca02c' pt 9 ps 1.5 title "ort", \
     $d3 using 1:2 with points lw 2 lc rgb '#ff7f0e' pt 11 ps 1.5 title "torch"
unset output
