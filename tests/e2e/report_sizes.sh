#!/bin/sh
# ftaxc --report's sizes for flash and RAM (docs/embedded.md), checked against what they describe:
#   report_sizes.sh BUILD_DIR MODEL_DIR WORK_DIR native|cross [ftaxc flags...]
# Compiles MODEL_DIR/model.onnx with --report (and the flags), then:
#   weights file = OUT.weights' size; weights (the plan's) = that size - 64 (the file's header)
#     = OUT_WEIGHT_BYTES of OUT.h; arena = OUT_ARENA_BYTES
#   code > 0 and below the program's file size; flash = code + const data + .data + weights;
#   RAM = arena + static data
#   target: "(cross compiler)" and no -march=native for cross, -march=native for native
#   with --emit-only: "code  not known (--emit-only ...)"
# Exit 0 pass, 1 with the failed check.
build=$1; model=$2; work=$3; kind=$4
shift 4
out="$work/prog"
rm -rf "$work"
mkdir -p "$work" || exit 1
fail() { echo "report_sizes: $*"; cat "$work/log"; exit 1; }
"$build/ftaxc" "$model/model.onnx" -o "$out" --report "$@" >"$work/log" 2>&1 || fail "ftaxc failed"
# the number after a report line's label
num() { sed -n "s/^  $1 *\([0-9][0-9]*\) bytes.*/\1/p" "$work/log" | head -n 1; }
wfile=$(num "weights file"); weights=$(num "weights"); arena=$(num "arena"); code=$(num "code")
const=$(num "const data"); flash=$(num "flash"); ram=$(num "RAM"); static=$(num "static data")
data=$(sed -n 's/^  static data .*(.data \([0-9]*\),.*/\1/p' "$work/log")
for v in wfile weights arena code const flash ram static data; do
  eval "[ -n \"\$$v\" ]" || fail "no $v in the report"
done
[ "$wfile" -eq "$(wc -c <"$out.weights")" ] || fail "weights file $wfile is not the size of $out.weights"
[ "$weights" -eq $((wfile - 64)) ] || fail "weights $weights is not the file's $wfile less its 64-byte header"
up=$(basename "$out" | tr '[:lower:]' '[:upper:]')
grep -q "define ${up}_WEIGHT_BYTES ${weights}u" "$out.h" || fail "weights $weights is not ${up}_WEIGHT_BYTES"
grep -q "define ${up}_ARENA_BYTES ${arena}u" "$out.h" || fail "arena $arena is not ${up}_ARENA_BYTES"
if [ "$code" -le 0 ] || [ "$code" -ge "$(wc -c <"$out")" ]; then fail "code $code not in (0, the program's size)"; fi
[ "$flash" -eq $((code + const + data + weights)) ] || fail "flash $flash is not code + const data + .data + weights"
[ "$ram" -eq $((arena + static)) ] || fail "RAM $ram is not arena + static data"
target=$(grep '^  target ' "$work/log")
case "$kind" in
  cross) case "$target" in *"(cross compiler)"*) ;; *) fail "not reported as a cross compiler";; esac
         case "$target" in *march=native*) fail "-march=native reached a cross compiler";; esac ;;
  *) case "$target" in *march=native*) ;; *) fail "native flags without -march=native";; esac ;;
esac
"$build/ftaxc" "$model/model.onnx" -o "$out" --report --emit-only "$@" >"$work/log" 2>&1 || fail "ftaxc --emit-only failed"
grep -q '^  code         not known (--emit-only' "$work/log" || fail "--emit-only does not say the code size is not known"
echo "report_sizes: pass (code $code, weights $weights, arena $arena bytes)"
rm -rf "$work"
