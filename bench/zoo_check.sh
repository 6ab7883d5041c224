#!/bin/sh
# The zoo against ONNX Runtime: export each model (when missing), compile it with ftaxc, check
# its outputs against torch's, then time the program and ORT on the same file, alternating them
# round by round, at each thread count. Prints a ratio table (ftaxc / ORT; below 1 = ftaxc faster)
# and each one's share of the machine's fp32 peak (2 x the MACs ftaxc --report counts, over the
# time, over build/peak's FMA rate at that thread count).
#
#   bench/zoo_check.sh [--zoo DIR] [--threads "1 2"] [--rounds R] [--iters N] [--busy K]
#                      [--precision fp32|bf16] [SPEC...]
#
# SPEC is a zoo name of bench/models/export.py, with @SEQ for text models (bert_base@128,
# bert_L2_H128@8: a scaled BERT, 2 layers, hidden 128). --threads defaults to 1 and the CPUs this
# process may use. --busy K starts K CPU-bound processes (shell loops) for the whole run, to
# measure how each runtime degrades when the machine is shared; the table then adds each
# runtime's N-thread time over its own 1-thread time under that load. The median of R rounds
# of medians is reported. --precision bf16 compiles with ftaxc --precision bf16 (ORT stays fp32:
# it has no bf16 for an fp32 model on the CPU; "% of peak" stays a share of the fp32 peak). Models
# are exported to --zoo (default bench/zoo; needs python3-torch), programs and logs go to
# bench/out/zoo_check/.
set -e
cd "$(dirname "$0")/.."
zoo=bench/zoo; iters=20; rounds=3; busy=0; precision=fp32
threads="1 $(nproc)"
while [ $# -gt 0 ]; do
  case $1 in
    --zoo) zoo=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --busy) busy=$2; shift 2 ;;
    --precision) precision=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- bert_L2_H128@8 bert_base@8 bert_base@128 distilbert@128 gpt2@16 vit_b_16 \
  resnet50 squeezenet1_1 mobilenet_v2 efficientnet_b0
[ -x build/ftaxc ] && [ -x build/ftax-compare ] && [ -x build/peak ] || { echo "zoo_check: build first (cmake --build build)" >&2; exit 1; }
[ -d bench/peers/node_modules/onnxruntime-node ] || (cd bench/peers && npm ci --ignore-scripts >/dev/null)
out=bench/out/zoo_check
mkdir -p "$out"

# the fp32 FMA peak for each thread count (build/peak), measured before any neighbour starts
peak_of() { build/peak "$1" | awk '{ print $3 }'; }
for t in $threads; do eval "peak_$t=\$(peak_of $t)"; done

spinners=""
stop_spinners() { [ -z "$spinners" ] || kill $spinners 2>/dev/null || true; }
trap stop_spinners EXIT INT TERM
i=0
while [ "$i" -lt "$busy" ]; do
  sh -c 'while :; do :; done' &
  spinners="$spinners $!"
  i=$((i + 1))
done

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

export_model() { # NAME: into $zoo unless there
  [ -f "$zoo/$1/model.onnx" ] && return 0
  case $1 in
    bert_L*_H*) l=${1#bert_L}; l=${l%%_*}; h=${1##*_H}
                /usr/bin/python3 bench/models/export.py --out "$zoo" bert_scaled --layers "$l" --hidden "$h" >&2 ;;
    *) /usr/bin/python3 bench/models/export.py --out "$zoo" "$1" >&2 ;;
  esac
}

# the largest output error of PROG on the zoo's torch reference (test_data_set_0)
check() { # NAME PROG
  d=$zoo/$1/test_data_set_0
  rm -rf "$2.out"
  "$2" "$d"/input_*.pb --output-dir "$2.out" >/dev/null
  err=0
  for f in "$d"/output_*.pb; do
    e=$(build/ftax-compare "$f" "$2.out/$(basename "$f")" --atol 1e-3 --rtol 0 | sed 's/.*max abs err \([^,]*\),.*/\1/')
    err=$(awk -v a="$err" -v b="$e" 'BEGIN { print (b + 0 > a + 0) ? b : a }')
  done
  echo "$err"
}

header="| model | GMACs | max abs err vs torch |"
rule="|---|---:|---:|"
for t in $threads; do
  header="$header ftaxc ${t}t ms | ORT ${t}t ms | ratio ${t}t | % of ${t}t peak, ftaxc / ORT |"
  rule="$rule---:|---:|---:|---:|"
done
[ "$busy" -eq 0 ] || { header="$header ftaxc Nt/1t | ORT Nt/1t |"; rule="$rule---:|---:|"; }
{ echo "$header"; echo "$rule"; } > "$out/table.md"
cat "$out/table.md"

for spec in "$@"; do
  m=${spec%@*}; seq=""
  [ "$m" = "$spec" ] || seq=${spec#*@}
  export_model "$m"
  dims="--dim batch=1"; [ -z "$seq" ] || dims="$dims --dim seq=$seq"
  tag=$(echo "$spec" | tr '@' '_')
  [ "$precision" = fp32 ] || tag=${tag}_$precision
  echo "== $spec: ftaxc $zoo/$m/model.onnx $dims" >&2
  # shellcheck disable=SC2086
  build/ftaxc "$zoo/$m/model.onnx" -o "$out/$tag" $dims --precision "$precision" --report 2>"$out/$tag.ftaxc.log"
  macs=$(sed -n 's/^ *MACs *\([0-9]*\).*/\1/p' "$out/$tag.ftaxc.log")
  # the reference was written at the export's own shape (seq 128 for text): check at that shape
  chk=$out/$tag
  if [ -n "$seq" ] && [ "$seq" != 128 ]; then
    chk=$out/${m}_check_$precision
    [ -x "$chk" ] || build/ftaxc "$zoo/$m/model.onnx" -o "$chk" --dim batch=1 --dim seq=128 --precision "$precision" 2>"$chk.ftaxc.log"
  fi
  err=$(check "$m" "$chk")
  row="| $spec | $(awk -v m="${macs:-0}" 'BEGIN { printf "%.3g", m / 1e9 }') | $err |"
  first_c=""; first_o=""; last_c=""; last_o=""
  for t in $threads; do
    : > "$out/$tag.c$t"; : > "$out/$tag.o$t"
  done
  r=0
  while [ "$r" -lt "$rounds" ]; do # alternate: every runtime and thread count once per round
    for t in $threads; do
      "$out/$tag" --bench --warmup 3 --iters "$iters" --threads "$t" --json |
        sed 's/.*"median_ms": \([0-9.]*\).*/\1/' >> "$out/$tag.c$t"
      # shellcheck disable=SC2086
      node bench/peers/ort_bench.js "$zoo/$m/model.onnx" $dims --threads "$t" --warmup 3 --iters "$iters" --json |
        sed 's/.*"median_ms":\([0-9.]*\).*/\1/' >> "$out/$tag.o$t"
    done
    r=$((r + 1))
  done
  for t in $threads; do
    c=$(median < "$out/$tag.c$t"); o=$(median < "$out/$tag.o$t")
    pk=$(eval echo "\$peak_$t")
    row="$row $(awk -v c="$c" -v o="$o" -v m="${macs:-0}" -v pk="$pk" 'BEGIN {
      printf "%.3f | %.3f | %.2f | %.0f / %.0f |", c, o, c / o, 2 * m / (c * 1e6) / pk * 100, 2 * m / (o * 1e6) / pk * 100 }')"
    [ -n "$first_c" ] || { first_c=$c; first_o=$o; }
    last_c=$c; last_o=$o
  done
  [ "$busy" -eq 0 ] || row="$row $(awk -v a="$last_c" -v b="$first_c" -v c="$last_o" -v d="$first_o" 'BEGIN { printf "%.2f | %.2f |", a / b, c / d }')"
  echo "$row" >> "$out/table.md"
  echo "$row"
done
{
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs;" \
       "fp32 FMA peak (build/peak): $(for t in $threads; do printf '%s GFLOP/s at %st; ' "$(eval echo "\$peak_$t")" "$t"; done)" \
       "precision: $precision; busy processes: $busy; rounds: $rounds x $iters iterations; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$out/table.md"
tail -n 1 "$out/table.md"
