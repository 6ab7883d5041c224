#!/bin/sh
# Compile every zoo model at batch 1 (seq 128 for text), check it against torch's outputs, and
# time it next to ONNX Runtime in the same run, 1 thread.
#   bench/zoo_check.sh [--zoo DIR] [--iters N] [NAME...]
# Models missing from the zoo folder are exported first (needs python3-torch).
set -e
cd "$(dirname "$0")/.."
zoo=bench/zoo; iters=20
while [ $# -gt 0 ]; do
  case $1 in
    --zoo) zoo=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- bert_base distilbert gpt2 resnet50 mobilenet_v2 efficientnet_b0 vit_b_16
out=bench/out/zoo_check
mkdir -p "$out"
printf '| model | max abs err vs torch | ftaxc median ms | ORT median ms | ftaxc / ORT |\n|---|---:|---:|---:|---:|\n' > "$out/table.md"
for m in "$@"; do
  [ -f "$zoo/$m/model.onnx" ] || /usr/bin/python3 bench/models/export.py --out "$zoo" "$m"
  dims="--dim batch=1"
  case $m in bert*|distilbert*|gpt2*) dims="$dims --dim seq=128" ;; esac
  echo "== $m: ftaxc $zoo/$m/model.onnx $dims" >&2
  # shellcheck disable=SC2086
  build/ftaxc "$zoo/$m/model.onnx" -o "$out/$m" $dims 2>"$out/$m.ftaxc.log"
  d=$zoo/$m/test_data_set_0
  rm -rf "$out/$m.out"
  "$out/$m" "$d"/input_*.pb --output-dir "$out/$m.out"
  err=0
  for f in "$d"/output_*.pb; do
    e=$(build/ftax-compare "$f" "$out/$m.out/$(basename "$f")" --atol 1e-3 --rtol 0 | sed 's/.*max abs err \([^,]*\),.*/\1/')
    err=$(awk -v a="$err" -v b="$e" 'BEGIN { print (b + 0 > a + 0) ? b : a }')
  done
  c=$("$out/$m" --bench --warmup 3 --iters "$iters" --json | sed 's/.*"median_ms": \([0-9.]*\).*/\1/')
  # shellcheck disable=SC2086
  o=$(node bench/peers/ort_bench.js "$zoo/$m/model.onnx" $dims --warmup 3 --iters "$iters" --json | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')
  awk -v m="$m" -v e="$err" -v c="$c" -v o="$o" 'BEGIN { printf "| %s | %s | %.2f | %.2f | %.2f |\n", m, e, c, o, c / o }' >> "$out/table.md"
  tail -n 1 "$out/table.md" >&2
done
cat "$out/table.md"
