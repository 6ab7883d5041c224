# bench/plot: gnuplot paper_fig10.gp (run from the folder above plots/)
set datafile missing "?"
set grid back lc rgb "#dddddd"
set key outside right top box opaque samplen 2
set border lw 1
$d << EOD
"batch 1" 0.00627 0.092889 0.167469 0.211354 0.00641 0.093179
"batch 4" 0.020892 0.11066 0.213958 0.266852 0.021332 0.113338
EOD
set title "GPT-2 decode step vs batch (KV cache, gpt2_kv_tiny)"
set ylabel "ms per decode step"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xrange [-0.6:1.6]
set xtics nomirror rotate by -20
unset grid
set grid ytics lc rgb '#dddddd'
set yrange [0:0.30688]
set terminal pngcairo size 1000,620 font 'DejaVu Sans,11' noenhanced
set output 'paper_fig10.png'
plot $d using 2:xtic(1) title "ftaxc program" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "ftax-eager" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "ONNX Runtime opt=all" lc rgb '#d62728', \
     $d using 5:xtic(1) title "ONNX Runtime opt=disabled" lc rgb '#2ca02c', \
     $d using 6:xtic(1) title "ftaxc program --generate" lc rgb '#9467bd', \
     $d using 7:xtic(1) title "ftax-eager --generate" lc rgb '#ff7f0e'
set terminal svg size 1000,620 font 'DejaVu Sans,11' noenhanced background '#ffffff'
set output 'paper_fig10.svg'
plot $d using 2:xtic(1) title "ftaxc program" lc rgb '#7f7f7f', \
     $d using 3:xtic(1) title "ftax-eager" lc rgb '#1f77b4', \
     $d using 4:xtic(1) title "ONNX Runtime opt=all" lc rgb '#d62728', \
     $d using 5:xtic(1) title "ONNX Runtime opt=disabled" lc rgb '#2ca02c', \
     $d using 6:xtic(1) title "ftaxc program --generate" lc rgb '#9467bd', \
     $d using 7:xtic(1) title "ftax-eager --generate" lc rgb '#ff7f0e'
unset output
