#!/bin/sh
# Quantized zoo models against ONNX Runtime on the same file: compile each with ftaxc, run both
# on the reference inputs (ORT's outputs by bench/peers/ort_run.js), report the largest output
# difference to ORT and each one's to the fp32 model's torch outputs, then time the program and
# ORT alternating round by round, at one thread count. Prints a table (ratio = ftaxc / ORT).
#
#   bench/int8_check.sh [--zoo DIR] [--threads T] [--rounds R] [--iters N] [SPEC...]
#
# SPEC is MODEL_FORM as bench/models/quantize.py writes it under --zoo (default bench/zoo):
# resnet50_qdq, mobilenet_v2_qdq, bert_base_qdq, bert_base_dynamic (text models run at seq 128,
# the reference's shape). Programs and logs go to bench/out/int8_check/.
set -e
cd "$(dirname "$0")/.."
zoo=bench/zoo; iters=10; rounds=3; threads=1
while [ $# -gt 0 ]; do
  case $1 in
    --zoo) zoo=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- resnet50_qdq mobilenet_v2_qdq bert_base_qdq bert_base_dynamic
[ -x build/ftaxc ] && [ -x build/ftax-compare ] || { echo "int8_check: build first (cmake --build build)" >&2; exit 1; }
[ -d bench/peers/node_modules/onnxruntime-node ] || (cd bench/peers && npm ci --ignore-scripts >/dev/null)
out=bench/out/int8_check
mkdir -p "$out"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# the largest absolute difference between the outputs in two directories (PREFIX: the first's)
maxdiff() { # DIR_A PREFIX DIR_B
  err=0
  for f in "$1"/"$2"output_*.pb; do
    b=$(basename "$f"); b=${b#"$2"}
    e=$(build/ftax-compare "$f" "$3/$b" --atol 0 --rtol 0 | sed 's/.*max abs err \([^,]*\),.*/\1/')
    err=$(awk -v a="$err" -v b="$e" 'BEGIN { print (b + 0 > a + 0) ? b : a }')
  done
  echo "$err"
}

echo "| model | ftaxc vs ORT max abs diff | ftaxc vs fp32 | ORT vs fp32 | ftaxc ${threads}t ms | ORT ${threads}t ms | ratio |" > "$out/table.md"
echo "|---|---:|---:|---:|---:|---:|---:|" >> "$out/table.md"
cat "$out/table.md"
for m in "$@"; do
  d=$zoo/$m/test_data_set_0
  dims="--dim batch=1"
  case $m in bert*|distilbert*|gpt2*) dims="$dims --dim seq=128" ;; esac
  # shellcheck disable=SC2086
  build/ftaxc "$zoo/$m/model.onnx" -o "$out/$m" $dims --report 2>"$out/$m.ftaxc.log"
  rm -rf "$out/$m.out" "$out/$m.ort"
  "$out/$m" "$d"/input_*.pb --output-dir "$out/$m.out" >/dev/null
  node bench/peers/ort_run.js "$zoo/$m/model.onnx" "$d"/input_*.pb --output-dir "$out/$m.ort"
  e_ort=$(maxdiff "$out/$m.ort" "" "$out/$m.out")
  e_c=$(maxdiff "$d" fp32_ "$out/$m.out")
  e_o=$(maxdiff "$d" fp32_ "$out/$m.ort")
  : > "$out/$m.c"; : > "$out/$m.o"
  r=0
  while [ "$r" -lt "$rounds" ]; do
    "$out/$m" --bench --warmup 2 --iters "$iters" --threads "$threads" --json |
      sed 's/.*"median_ms": \([0-9.]*\).*/\1/' >> "$out/$m.c"
    # shellcheck disable=SC2086
    node bench/peers/ort_bench.js "$zoo/$m/model.onnx" $dims --threads "$threads" --warmup 2 --iters "$iters" --json |
      sed 's/.*"median_ms":\([0-9.]*\).*/\1/' >> "$out/$m.o"
    r=$((r + 1))
  done
  c=$(median < "$out/$m.c"); o=$(median < "$out/$m.o")
  row="| $m | $e_ort | $e_c | $e_o | $(awk -v c="$c" -v o="$o" 'BEGIN { printf "%.1f | %.1f | %.2f |", c, o, c / o }')"
  echo "$row" >> "$out/table.md"
  echo "$row"
done
echo "$(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; $rounds rounds x $iters iterations; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/table.md"
tail -n 1 "$out/table.md"
