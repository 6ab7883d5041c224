#!/bin/sh
# One end-to-end model test: compile tests/models/<model>/model.onnx with ftaxc at the shape of
# one data set, run the program on that data set, compare every output.
#   run_model_test.sh BUILD_DIR MODEL_DIR DATA_SET_DIR WORK_DIR
#
# Shapes: by default every input whose shape the model leaves open is pinned with --shape to the
# shape of the data set's input_K.pb (ftax-testtool shape-flags). A file MODEL_DIR/dims, one
# SYM=N per line (# comments allowed), replaces that with --dim SYM=N flags.
# Program flags: $FTAX_PROGRAM_CFLAGS, when set, is passed as --cflags (the sanitizer build).
# Cross targets (label cross): $FTAX_TEST_CC, when set, is passed as --cc (e.g.
# aarch64-linux-gnu-gcc; ftaxc picks its cross default flags) and the program runs under
# $FTAX_TEST_RUNNER (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu"); the same comparisons follow.
# Tolerance: |actual - expected| <= 1e-4 + 1e-3 * |expected| for floating point, integers exact;
# a file MODEL_DIR/tolerance holding ftax-compare flags (e.g. "--atol 1e-3 --rtol 1e-2")
# replaces the default for that model.
# ftax-eager runs the same data set; its outputs must match torch's at the same tolerance and the
# program's within 1e-5 + 1e-4 * |program| (same kernels; folding and fusion reorder arithmetic).
# Exit: 0 pass, otherwise the failing step's exit code, with one line saying why.
build=$1; model=$2; set=$3; work=$4
name=$(basename "$model")_$(basename "$set")
dir="$work/$name"
rm -rf "$dir"
mkdir -p "$dir" || exit 4
log="$dir/log"

set --
flags=$("$build/ftax-testtool" shape-flags "$model/model.onnx" "$set" 2>"$log") || {
  echo "$name: cannot read the data set's shapes: $(tail -n 1 "$log")"; exit 2; }
# one argument per line (input names may hold spaces)
nl='
'
old_ifs=$IFS; IFS=$nl
for a in $flags; do set -- "$@" "$a"; done
IFS=$old_ifs
# the same flags pin ftax-eager's shapes
eager_flags=$*
# FTAX_PROGRAM_CFLAGS (set by CTest from the CMake cache; the sanitizer build's flags there)
# replaces ftaxc's default flags for the generated program
if [ -n "${FTAX_PROGRAM_CFLAGS:-}" ]; then set -- "$@" --cflags "$FTAX_PROGRAM_CFLAGS"; fi
if [ -n "${FTAX_TEST_CC:-}" ]; then set -- "$@" --cc "$FTAX_TEST_CC"; fi
echo "ftaxc $model/model.onnx -o $dir/prog $*" >>"$log"
"$build/ftaxc" "$model/model.onnx" -o "$dir/prog" "$@" >>"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  cat "$log"
  echo "$name: ftaxc exit $rc"
  exit $rc
fi

set --
n=0
while [ -e "$set/input_$n.pb" ]; do set -- "$@" "$set/input_$n.pb"; n=$((n + 1)); done
# the runner is a command and its flags: word splitting wanted
# shellcheck disable=SC2086
if ! ${FTAX_TEST_RUNNER:-} "$dir/prog" "$@" --output-dir "$dir/out" >>"$log" 2>&1; then
  cat "$log"
  echo "$name: the program failed"
  exit 6
fi

tol="--atol 1e-4 --rtol 1e-3"
[ -f "$model/tolerance" ] && tol=$(grep -v '^ *#' "$model/tolerance")
k=0
bad=0
while [ -e "$set/output_$k.pb" ]; do
  # word splitting of $tol is wanted: it holds flags
  # shellcheck disable=SC2086
  "$build/ftax-compare" "$set/output_$k.pb" "$dir/out/output_$k.pb" $tol || bad=1
  k=$((k + 1))
done
# shellcheck disable=SC2086
if ! "$build/ftax-eager" "$model/model.onnx" $eager_flags "$@" --output-dir "$dir/eager" >>"$log" 2>&1; then
  cat "$log"
  echo "$name: ftax-eager failed"
  exit 6
fi
j=0
while [ -e "$set/output_$j.pb" ]; do
  # shellcheck disable=SC2086
  "$build/ftax-compare" "$set/output_$j.pb" "$dir/eager/output_$j.pb" $tol || bad=1
  "$build/ftax-compare" "$dir/out/output_$j.pb" "$dir/eager/output_$j.pb" --atol 1e-5 --rtol 1e-4 || bad=1
  j=$((j + 1))
done
if [ $k -eq 0 ]; then
  echo "$name: the data set has no output_0.pb"
  exit 2
fi
if [ $bad -ne 0 ]; then
  echo "$name: outputs differ beyond the tolerance ($tol); files kept in $dir"
  exit 5
fi
echo "$name: pass ($k output(s), $tol)"
rm -rf "$dir"
exit 0
