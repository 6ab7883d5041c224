# bench/plot: gnuplot paper_fig1_macs.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
0.218169344 5.86725
0.300774272 15.1767
0.385814752 17.9914
0.436273152 15.7807
0.478150656 14.8184
0.818924576 21.3803
0.872480768 51.3064
0.981991424 25.8998
1.308688384 54.0946
1.677983744 82.5081
1.814073344 85.6696
2.692743168 127.011
3.663761408 120.514
4.089184256 145.235
14.011716608 364.372
EOD
$d1 << EOD
0.218169344 4.90757
0.300774272 13.4131
0.385814752 13.3883
0.436273152 14.4298
0.478150656 27.8615
0.818924576 19.4661
0.872480768 40.5012
0.981991424 22.3722
1.308688384 28.9257
1.677983744 41.9836
1.814073344 93.3631
2.692743168 104.837
3.663761408 127.306
4.089184256 138.111
14.011716608 370.236
EOD
$d2 << EOD
0.218169344 9.19855
0.300774272 11.9036
0.385814752 11.9579
0.436273152 14.9778
0.478150656 31.6161
0.818924576 15.9079
0.872480768 48.3474
0.981991424 23.5444
1.308688384 29.4848
1.677983744 53.2308
1.814073344 70.9391
2.692743168 98.1241
3.663761408 108.35
4.089184256 119.047
14.011716608 328.461
EOD
$d3 << EOD
0.218169344 160.177
0.300774272 102.634
0.385814752 256.638
0.436273152 631.357
0.478150656 442.732
0.818924576 109.414
0.872480768 1427.27
0.981991424 770.915
1.308688384 994.803
1.677983744 1788.39
1.814073344 67.4159
2.692743168 3109.19
3.663761408 134.815
4.089184256 1053.8
EOD
set title "Latency vs multiply-accumulates at batch 1 (text at seq 128), 1 thread"
set xlabel 'GMACs'
set ylabel 'median latency (ms)'
set logscale xy
set xrange [0.145446:21.0176]
set yrange [3.27171:4663.78]
set format x '%g'
set format y '%g'
set label "bert_L2_H256" at 0.218169,4.90757 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "mobilenet_v2" at 0.300774,13.4131 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "efficientnet_b0" at 0.385815,13.3883 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L4_H256" at 0.436273,14.4298 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "squeezebert_H256" at 0.478151,27.8615 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "squeezenet" at 0.818925,19.4661 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L8_H256" at 0.872481,40.5012 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "funnel_H256" at 0.981991,22.3722 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L12_H256" at 1.30869,28.9257 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L4_H512" at 1.67798,41.9836 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet18" at 1.81407,93.3631 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "mobilebert" at 2.69274,104.837 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet34" at 3.66376,127.306 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet50" at 4.08918,138.111 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "wavlm_base" at 14.0117,370.236 offset 0.5,0.6 font ',8' tc rgb '#555555'
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
