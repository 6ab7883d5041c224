#!/bin/sh
# One CUDA backend test on a committed model (tests/models/<model>) at the shape of one data set.
#   run_cuda_test.sh MODE BUILD_DIR MODEL_DIR DATA_SET_DIR WORK_DIR PRECISION GRAPH
# MODE compile   ftaxc --target cuda, nvcc builds the program, `prog --help` runs (it links)
#      gpu       run the compiled program on the data set and compare every output with the
#                reference; skipped (exit 77) when there is no CUDA device
#      nodevice  without a CUDA device the program must fail loudly (nonzero exit, a message
#                naming CUDA), never print zeros; skipped when there is a device
# PRECISION fp32 | tf32 | fp16; GRAPH graph | nograph.
# Tolerances (|actual - expected| <= atol + rtol |expected|): fp32 1e-3 + 1e-3; tf32 and fp16
# 2e-2 + 2e-2 (float16 storage: 11-bit significands through every layer, fp32 accumulation).
# Environment: FTAX_CUDA_TEST_ARCH (default sm_90), FTAX_CUDA_TEST_CFLAGS (default -O1).
mode=$1; build=$2; model=$3; set=$4; work=$5; prec=$6; graph=$7
name=$(basename "$model")_${prec}_$graph
dir="$work/$name"
prog="$dir/prog"

if [ "$mode" = compile ]; then
  rm -rf "$dir"
  mkdir -p "$dir" || exit 4
  log="$dir/compile.log"
  flags=$("$build/ftax-testtool" shape-flags "$model/model.onnx" "$set" 2>"$log") || {
    cat "$log"; echo "$name: cannot read the data set's shapes"; exit 2; }
  set --
  nl='
'
  old_ifs=$IFS; IFS=$nl
  for a in $flags; do set -- "$@" "$a"; done
  IFS=$old_ifs
  [ "$graph" = graph ] && set -- "$@" --cuda-graph
  echo "ftaxc $model/model.onnx -o $prog --target cuda --precision $prec $*" >"$log"
  "$build/ftaxc" "$model/model.onnx" -o "$prog" --target cuda --precision "$prec" \
    --arch "${FTAX_CUDA_TEST_ARCH:-sm_90}" --cflags "${FTAX_CUDA_TEST_CFLAGS:--O1}" "$@" >>"$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then cat "$log"; echo "$name: ftaxc --target cuda exit $rc"; exit $rc; fi
  if ! "$prog" --help >>"$log" 2>&1; then cat "$log"; echo "$name: the program does not start (libraries?)"; exit 6; fi
  echo "$name: compiled and linked ($(wc -c <"$dir/prog.cu") bytes of CUDA)"
  exit 0
fi

probe=$("$build/ftax-cuda-probe"); has_gpu=$?
if [ ! -x "$prog" ]; then echo "$name: $prog is missing (the compile test failed?)"; exit 2; fi
set --
n=0
while [ -e "$set/input_$n.pb" ]; do set -- "$@" "$set/input_$n.pb"; n=$((n + 1)); done

if [ "$mode" = nodevice ]; then
  if [ $has_gpu -eq 0 ]; then echo "$name: skipped: there is a CUDA device ($probe)"; exit 77; fi
  rm -rf "$dir/out"
  "$prog" "$@" --output-dir "$dir/out" >"$dir/nodevice.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] || [ -e "$dir/out/output_0.pb" ]; then
    cat "$dir/nodevice.log"; echo "$name: the program succeeded without a CUDA device"; exit 5
  fi
  if ! grep -q CUDA "$dir/nodevice.log"; then
    cat "$dir/nodevice.log"; echo "$name: failed (exit $rc) without saying it is about CUDA"; exit 5
  fi
  echo "$name: fails loudly without a device (exit $rc: $(head -n 1 "$dir/nodevice.log"))"
  exit 0
fi

if [ $has_gpu -ne 0 ]; then echo "$name: skipped: $probe"; exit 77; fi
case $prec in
  fp32) tol="--atol 1e-3 --rtol 1e-3" ;;
  *) tol="--atol 2e-2 --rtol 2e-2" ;;
esac
rm -rf "$dir/out"
if ! FTAX_CUDA_SYNC=1 "$prog" "$@" --output-dir "$dir/out" >"$dir/run.log" 2>&1; then
  cat "$dir/run.log"; echo "$name: the program failed on $probe"; exit 6
fi
k=0
bad=0
while [ -e "$set/output_$k.pb" ]; do
  # shellcheck disable=SC2086
  "$build/ftax-compare" "$set/output_$k.pb" "$dir/out/output_$k.pb" $tol || bad=1
  k=$((k + 1))
done
if [ $bad -ne 0 ]; then echo "$name: outputs differ beyond $tol on $probe; files kept in $dir"; exit 5; fi
echo "$name: pass on $probe ($k output(s), $tol)"
exit 0
