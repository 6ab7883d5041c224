#!/bin/sh
# The kernel table: every GEMM and convolution shape of the zoo, ftax's planned call vs oneDNN,
# at 1 thread and at all CPUs, into bench/results/<machine>/kernels.md.
#   bench/kernels/kernel_table.sh [--zoo DIR] [--secs S] [--out FILE] [--max-m M] [SPEC...]
# SPEC as in bench/zoo_check.sh (NAME or NAME@SEQ); missing models are exported (python3-torch).
# --max-m M: only the GEMMs of at most M rows, with the GB/s of their weights (the small-M table).
set -e
cd "$(dirname "$0")/../.."
zoo=bench/zoo; secs=0.3; out=""; maxm=""
while [ $# -gt 0 ]; do
  case $1 in
    --zoo) zoo=$2; shift 2 ;;
    --secs) secs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --max-m) maxm="--max-m $2"; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- bert_base@128 bert_base@8 gpt2@16 vit_b_16 resnet50 mobilenet_v2 efficientnet_b0 squeezenet1_1
[ -x build/kernel_table ] || { echo "kernel_table.sh: build/kernel_table is missing (needs libdnnl-dev; cmake --build build)" >&2; exit 1; }
[ -n "$out" ] || out=bench/results/cpu-$(nproc)core-$(grep -q avx512f /proc/cpuinfo && echo avx512 || echo noavx512)/kernels.md
mkdir -p "$(dirname "$out")"
{
  echo "# Kernel table: ftax vs oneDNN, every GEMM and convolution call of the zoo"
  echo
  echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, oneDNN $(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null)."
  echo "Median of runs over ${secs} s per shape; command: \`bench/kernels/kernel_table.sh ${maxm:+$maxm }$*\`."
  echo "Ratio = ftax time / oneDNN time (below 1: ftax faster); the last row of each table sums all calls."
  echo
} > "$out"
for spec in "$@"; do
  m=${spec%@*}; dims="--dim batch=1"
  [ "$m" = "$spec" ] || dims="$dims --dim seq=${spec#*@}"
  if [ ! -f "$zoo/$m/model.onnx" ]; then /usr/bin/python3 bench/models/export.py --out "$zoo" "$m" >&2; fi
  for t in 1 $(nproc); do
    echo "== $spec, $t thread(s)" >&2
    # shellcheck disable=SC2086
    build/kernel_table "$zoo/$m/model.onnx" $dims $maxm --threads "$t" --secs "$secs" --label "$spec" | tee -a "$out"
  done
done
echo "wrote $out" >&2
