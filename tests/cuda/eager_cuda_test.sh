#!/bin/sh
# ftax-eager --device cuda on one model: data set SET runs, its outputs are compared with the
# reference (the tolerance of tests/e2e/run_model_test.sh, or MODEL_DIR/tolerance), then
#   - --bench --profile: the profile says device cuda, its kernel time is at most its wall time,
#     and the per-op rows add up to the kernel time;
#   - emu only: without a device (FTAX_EMU_NO_DEVICE=1) and without code for it
#     (FTAX_EMU_NO_IMAGE=1) it fails with exit 2 and says so, writing no output.
#   eager_cuda_test.sh emu|gpu BUILD_DIR MODEL_DIR SET_DIR WORK_DIR
# emu: ftax-eager-emu (the eager CUDA runtime built against tests/cuda/emu, no GPU needed);
# gpu: the real ftax-eager on a GPU, skipped (exit 77) without one.
mode=$1; build=$2; model=$3; set=$4; work=$5
name=eager_${mode}_$(basename "$model")
dir="$work/$name"
rm -rf "$dir"
mkdir -p "$dir/out" || exit 4
log="$dir/log"
eager="$build/ftax-eager"
where="on $mode"
if [ "$mode" = emu ]; then
  eager="$build/ftax-eager-emu"
  where="under CPU emulation"
else
  probe=$("$build/ftax-cuda-probe") || { echo "$name: skipped: $probe"; exit 77; }
  where="on $probe"
fi
[ -x "$eager" ] || { echo "$name: $eager was not built"; exit 2; }

set --
flags=$("$build/ftax-testtool" shape-flags "$model/model.onnx" "$set" 2>"$log") || {
  echo "$name: cannot read the data set's shapes"; exit 2; }
nl='
'
old_ifs=$IFS; IFS=$nl
for a in $flags; do set -- "$@" "$a"; done
IFS=$old_ifs
n=0
while [ -e "$set/input_$n.pb" ]; do set -- "$@" "$set/input_$n.pb"; n=$((n + 1)); done

if ! "$eager" "$model/model.onnx" --device cuda "$@" --output-dir "$dir/out" >>"$log" 2>&1; then
  cat "$log"; echo "$name: ftax-eager --device cuda failed $where"; exit 6
fi
tol="--atol 1e-4 --rtol 1e-3"
[ -f "$model/tolerance" ] && tol=$(grep -v '^ *#' "$model/tolerance")
k=0; bad=0
while [ -e "$set/output_$k.pb" ]; do
  # shellcheck disable=SC2086
  "$build/ftax-compare" "$set/output_$k.pb" "$dir/out/output_$k.pb" $tol >>"$log" 2>&1 || bad=1
  k=$((k + 1))
done
[ $k -gt 0 ] || { echo "$name: the data set has no output_0.pb"; exit 2; }
[ $bad = 0 ] || { cat "$log"; echo "$name: outputs differ from the reference $where"; exit 5; }

# the profile: GPU time from events, wall time around the run
"$eager" "$model/model.onnx" --device cuda "$@" --bench --warmup 1 --iters 2 --profile --json >"$dir/profile.json" 2>>"$log" || {
  cat "$log"; echo "$name: --bench --profile failed"; exit 6; }
grep '^{"profile"' "$dir/profile.json" | tr ',{}[]' '\n\n\n\n\n' | awk -F': *' '
  /"device"/ { dev = $2 }
  /"runs"/ { runs = $2 }
  /"wall_ms"/ { wall = $2 }
  /"kernel_ms"/ { if (seen++) rows += $2; else kern = $2 }
  END {
    d = rows - kern; if (d < 0) d = -d
    ok = dev == "\"cuda\"" && runs >= 2 && kern > 0 && kern <= wall && d <= 1e-3 * kern + 1e-5
    if (!ok) printf "device %s, runs %s, wall %s ms, kernel %s ms, rows sum %s ms\n", dev, runs, wall, kern, rows
    exit !ok
  }' || { cat "$dir/profile.json"; echo "$name: the profile does not add up"; exit 5; }

if [ "$mode" != emu ]; then
  echo "$name: pass $where ($k output(s), $tol; profile adds up)"
  exit 0
fi
# no device, no code for the device: exit 2, a reason, nothing written
for env in FTAX_EMU_NO_DEVICE FTAX_EMU_NO_IMAGE; do
  rm -rf "$dir/none"; mkdir -p "$dir/none"
  env "$env=1" "$eager" "$model/model.onnx" --device cuda "$@" --output-dir "$dir/none" >"$dir/none.log" 2>&1
  rc=$?
  want="no CUDA device"; [ $env = FTAX_EMU_NO_IMAGE ] && want="no GPU code"
  if [ $rc -ne 2 ] || ! grep -q "$want" "$dir/none.log" || [ -n "$(ls "$dir/none")" ]; then
    cat "$dir/none.log"; echo "$name: with $env=1 expected exit 2 saying '$want' and no output (exit $rc)"; exit 5
  fi
done
echo "$name: pass $where ($k output(s), $tol; profile adds up; no device -> exit 2)"
