#!/bin/sh
# One CUDA backend test on a committed model (tests/models/<model>) at the shape of one data set.
#   run_cuda_test.sh MODE BUILD_DIR MODEL_DIR DATA_SET_DIR WORK_DIR PRECISION GRAPH
# MODE compile   ftaxc --target cuda, nvcc builds the program, `prog --help` runs (it links)
#      gpucompile the same where there is a CUDA device; skipped (exit 77) where there is none
#      emu       the same program built with the host C++ compiler against tests/cuda/emu (the
#                CUDA runtime, cuBLASLt and cuDNN emulated on the CPU), run and compared: no nvcc
#                or GPU needed; checks ftax's side of the program, not the GPU's
#      emuchecks on the emu build: without a device / without code for the device it fails loudly,
#                FTAX_CUDA_SYNC=1 still gives the right outputs, --bench prints GPU timings
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
here=$(cd "$(dirname "$0")" && pwd)
case $mode in emu*) name=${name}_emu ;; esac
dir="$work/$name"
prog="$dir/prog"

tolerance() {
  case $prec in
    fp32) tol="--atol 1e-3 --rtol 1e-3" ;;
    *) tol="--atol 2e-2 --rtol 2e-2" ;;
  esac
}
# compare every output_K.pb of the data set with $1/output_K.pb
compare() {
  k=0
  bad=0
  while [ -e "$set/output_$k.pb" ]; do
    # shellcheck disable=SC2086
    "$build/ftax-compare" "$set/output_$k.pb" "$1/output_$k.pb" $tol || bad=1
    k=$((k + 1))
  done
  return $bad
}
inputs() {
  n=0
  while [ -e "$set/input_$n.pb" ]; do printf '%s\n' "$set/input_$n.pb"; n=$((n + 1)); done
}

if [ "$mode" = gpucompile ]; then
  probe=$("$build/ftax-cuda-probe") || { echo "$name: skipped: $probe"; exit 77; }
  mode=compile
fi
if [ "$mode" = compile ] || [ "$mode" = emu ]; then
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
  [ "$mode" = emu ] && set -- "$@" --emit-only
  echo "ftaxc $model/model.onnx -o $prog --target cuda --precision $prec $*" >"$log"
  "$build/ftaxc" "$model/model.onnx" -o "$prog" --target cuda --precision "$prec" \
    --arch "${FTAX_CUDA_TEST_ARCH:-sm_90}" --cflags "${FTAX_CUDA_TEST_CFLAGS:--O1}" "$@" >>"$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then cat "$log"; echo "$name: ftaxc --target cuda exit $rc"; exit $rc; fi
  if [ "$mode" = emu ]; then
    cxx=${CXX:-c++}
    if ! $cxx -std=c++20 -O1 -w -I "$here/emu" -x c++ "$prog.cu" -o "$prog" -lpthread >>"$log" 2>&1; then
      cat "$log"; echo "$name: $cxx cannot build the program against the CUDA emulation"; exit 4
    fi
    rm -rf "$dir/out"
    # shellcheck disable=SC2046
    if ! "$prog" $(inputs) --output-dir "$dir/out" >"$dir/run.log" 2>&1; then
      cat "$dir/run.log"; echo "$name: the program failed under emulation"; exit 6
    fi
    tolerance
    compare "$dir/out" || { echo "$name: outputs differ beyond $tol under emulation; files kept in $dir"; exit 5; }
    echo "$name: pass under CPU emulation ($k output(s), $tol)"
    exit 0
  fi
  if ! "$prog" --help >>"$log" 2>&1; then cat "$log"; echo "$name: the program does not start (libraries?)"; exit 6; fi
  echo "$name: compiled and linked ($(wc -c <"$dir/prog.cu") bytes of CUDA)"
  exit 0
fi

if [ "$mode" = emuchecks ]; then
  [ -x "$prog" ] || { echo "$name: $prog is missing (the emu test failed?)"; exit 2; }
  tolerance
  # shellcheck disable=SC2046
  set -- $(inputs)
  FTAX_EMU_NO_DEVICE=1 "$prog" "$@" --output-dir "$dir/o1" >"$dir/c1.log" 2>&1 && { cat "$dir/c1.log"; echo "$name: ran without a device"; exit 5; }
  grep -q "no CUDA device" "$dir/c1.log" || { cat "$dir/c1.log"; echo "$name: no device, but no message saying so"; exit 5; }
  [ -e "$dir/o1/output_0.pb" ] && { echo "$name: wrote outputs without a device"; exit 5; }
  FTAX_EMU_NO_IMAGE=1 "$prog" "$@" --output-dir "$dir/o2" >"$dir/c2.log" 2>&1 && { cat "$dir/c2.log"; echo "$name: ran without code for the device"; exit 5; }
  grep -q "no code for" "$dir/c2.log" || { cat "$dir/c2.log"; echo "$name: wrong architecture, but no message saying so"; exit 5; }
  rm -rf "$dir/o3"
  FTAX_CUDA_SYNC=1 FTAX_CUDA_VERBOSE=1 FTAX_EMU_CBA_UNSUPPORTED=1 "$prog" "$@" --output-dir "$dir/o3" >"$dir/c3.log" 2>&1 || { cat "$dir/c3.log"; echo "$name: FTAX_CUDA_SYNC=1 run failed"; exit 6; }
  compare "$dir/o3" || { echo "$name: FTAX_CUDA_SYNC=1 changes the outputs"; exit 5; }
  "$prog" "$@" --bench --warmup 1 --iters 3 --json >"$dir/c4.log" 2>&1 || { cat "$dir/c4.log"; echo "$name: --bench failed"; exit 6; }
  grep -q '"gpu_compute_ms"' "$dir/c4.log" && grep -q '"h2d_ms"' "$dir/c4.log" || { cat "$dir/c4.log"; echo "$name: --bench --json lacks GPU timings"; exit 5; }
  "$prog" "$@" --bench --warmup 1 --iters 3 --no-data-transfers >"$dir/c5.log" 2>&1 || { cat "$dir/c5.log"; echo "$name: --no-data-transfers failed"; exit 6; }
  grep -q "GPU compute" "$dir/c5.log" && ! grep -q "H2D" "$dir/c5.log" || { cat "$dir/c5.log"; echo "$name: --no-data-transfers output"; exit 5; }
  "$prog" "$@" --no-data-transfers >/dev/null 2>&1 && { echo "$name: --no-data-transfers without --bench accepted"; exit 5; }
  echo "$name: fails loudly without a device or code for it; FTAX_CUDA_SYNC, --bench, --no-data-transfers work"
  exit 0
fi

probe=$("$build/ftax-cuda-probe"); has_gpu=$?
if [ "$mode" = gpu ] && [ $has_gpu -ne 0 ]; then echo "$name: skipped: $probe"; exit 77; fi
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
tolerance
rm -rf "$dir/out"
if ! FTAX_CUDA_SYNC=1 "$prog" "$@" --output-dir "$dir/out" >"$dir/run.log" 2>&1; then
  cat "$dir/run.log"; echo "$name: the program failed on $probe"; exit 6
fi
compare "$dir/out" || { echo "$name: outputs differ beyond $tol on $probe; files kept in $dir"; exit 5; }
echo "$name: pass on $probe ($k output(s), $tol)"
exit 0
