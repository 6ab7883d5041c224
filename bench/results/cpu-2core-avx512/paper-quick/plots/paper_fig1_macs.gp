# bench/plot: gnuplot paper_fig1_macs.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d0 << EOD
0.218169344 5.27079
0.300774272 9.9174
0.385814752 17.5566
0.436273152 10.5251
0.478150656 15.2659
0.818924576 18.7854
0.872480768 21.737
0.981991424 24.3303
1.308688384 31.1455
1.677983744 37.1733
1.814073344 33.4682
2.692743168 61.7798
3.663761408 56.0772
4.089184256 75.2416
14.011716608 329.429
EOD
$d1 << EOD
0.218169344 4.75746
0.300774272 7.93493
0.385814752 12.5991
0.436273152 9.732
0.478150656 15.8338
0.818924576 16.815
0.872480768 19.3684
0.981991424 22.1295
1.308688384 28.7033
1.677983744 34.4506
1.814073344 34.0808
2.692743168 59.0775
3.663761408 57.8811
4.089184256 73.1909
14.011716608 335.835
EOD
$d2 << EOD
0.218169344 4.77329
0.300774272 7.1185
0.385814752 11.9187
0.436273152 10.0214
0.478150656 15.022
0.818924576 15.5881
0.872480768 19.7503
0.981991424 22.9119
1.308688384 28.867
1.677983744 35.4247
1.814073344 33.845
2.692743168 59.4928
3.663761408 66.4609
4.089184256 75.2545
14.011716608 290.732
EOD
$d3 << EOD
0.218169344 6.46591
0.300774272 14.0835
0.385814752 22.2024
0.436273152 13.6589
0.478150656 22.1299
0.818924576 36.2222
0.872480768 26.8678
0.981991424 33.6776
1.308688384 39.0335
1.677983744 45.9226
1.814073344 48.3955
2.692743168 77.8998
3.663761408 77.2082
4.089184256 98.8815
14.011716608 346.159
EOD
set title "Latency vs multiply-accumulates at batch 1 (text at seq 128), 1 thread"
set xlabel 'GMACs'
set ylabel 'median latency (ms)'
set logscale xy
set xrange [0.145446:21.0176]
set yrange [3.17164:519.238]
set format x '%g'
set format y '%g'
set label "bert_L2_H256" at 0.218169,4.75746 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "mobilenet_v2" at 0.300774,7.93493 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "efficientnet_b0" at 0.385815,12.5991 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L4_H256" at 0.436273,9.732 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "squeezebert_H256" at 0.478151,15.8338 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "squeezenet" at 0.818925,16.815 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L8_H256" at 0.872481,19.3684 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "funnel_H256" at 0.981991,22.1295 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L12_H256" at 1.30869,28.7033 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "bert_L4_H512" at 1.67798,34.4506 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet18" at 1.81407,34.0808 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "mobilebert" at 2.69274,59.0775 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet34" at 3.66376,57.8811 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "resnet50" at 4.08918,73.1909 offset 0.5,0.6 font ',8' tc rgb '#555555'
set label "wavlm_base" at 14.0117,335.835 offset 0.5,0.6 font ',8' tc rgb '#555555'
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
