#!/bin/sh
# One end-to-end model test: compile tests/models/<model>/model.onnx with ftaxc at the shape of
# a data set, run the program on the data set, compare every output.
#   run_model_test.sh BUILD_DIR MODEL_DIR DATA_SET_DIR WORK_DIR
#   run_model_test.sh BUILD_DIR MODEL_DIR all WORK_DIR     every MODEL_DIR/test_data_set_<N>
# With `all`, data sets whose ftaxc flags are the same (a model with static shapes, or two sets at
# one shape) share one program: it is compiled once and run on each of them.
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
# Exit: 0 pass, otherwise the first failing step's exit code, with one line saying why.
build=$1; model=$2; which=$3; work=$4
mname=$(basename "$model")
nl='
'
tol="--atol 1e-4 --rtol 1e-3"
[ -f "$model/tolerance" ] && tol=$(grep -v '^ *#' "$model/tolerance")

# programs built so far: "FLAGS<tab>DIR" per line (FLAGS with newlines turned into tabs)
built=""

# run_set SET: compile (or reuse), run, compare one data set; returns 0 or the exit code
run_set() {
  set_dir=$1
  name=${mname}_$(basename "$set_dir")
  dir="$work/$name"
  rm -rf "$dir"
  mkdir -p "$dir" || return 4
  log="$dir/log"

  set --
  flags=$("$build/ftax-testtool" shape-flags "$model/model.onnx" "$set_dir" 2>"$log") || {
    echo "$name: cannot read the data set's shapes: $(tail -n 1 "$log")"; return 2; }
  # one argument per line (input names may hold spaces)
  old_ifs=$IFS; IFS=$nl
  for a in $flags; do set -- "$@" "$a"; done
  IFS=$old_ifs
  # the same flags pin ftax-eager's shapes
  eager_flags=$*
  # FTAX_PROGRAM_CFLAGS (set by CTest from the CMake cache; the sanitizer build's flags there)
  # replaces ftaxc's default flags for the generated program
  if [ -n "${FTAX_PROGRAM_CFLAGS:-}" ]; then set -- "$@" --cflags "$FTAX_PROGRAM_CFLAGS"; fi
  if [ -n "${FTAX_TEST_CC:-}" ]; then set -- "$@" --cc "$FTAX_TEST_CC"; fi

  key=$(printf '%s' "$flags" | tr '\n' '\t')
  prog=""
  while IFS= read -r line; do
    [ -n "$line" ] && [ "${line%	*}" = "$key" ] && { prog=${line##*	}; break; }
  done <<EOF_BUILT
$built
EOF_BUILT
  if [ -n "$prog" ]; then
    echo "the program of the same flags, $prog" >>"$log"
  else
    prog="$dir/prog"
    echo "ftaxc $model/model.onnx -o $prog $*" >>"$log"
    "$build/ftaxc" "$model/model.onnx" -o "$prog" "$@" >>"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      cat "$log"
      echo "$name: ftaxc exit $rc"
      return $rc
    fi
    built="$built$key	$prog$nl"
  fi

  set --
  n=0
  while [ -e "$set_dir/input_$n.pb" ]; do set -- "$@" "$set_dir/input_$n.pb"; n=$((n + 1)); done
  # the runner is a command and its flags: word splitting wanted
  # shellcheck disable=SC2086
  if ! ${FTAX_TEST_RUNNER:-} "$prog" "$@" --output-dir "$dir/out" >>"$log" 2>&1; then
    cat "$log"
    echo "$name: the program failed"
    return 6
  fi

  k=0
  bad=0
  while [ -e "$set_dir/output_$k.pb" ]; do
    # word splitting of $tol is wanted: it holds flags
    # shellcheck disable=SC2086
    "$build/ftax-compare" "$set_dir/output_$k.pb" "$dir/out/output_$k.pb" $tol || bad=1
    k=$((k + 1))
  done
  # shellcheck disable=SC2086
  if ! "$build/ftax-eager" "$model/model.onnx" $eager_flags "$@" --output-dir "$dir/eager" >>"$log" 2>&1; then
    cat "$log"
    echo "$name: ftax-eager failed"
    return 6
  fi
  j=0
  while [ -e "$set_dir/output_$j.pb" ]; do
    # shellcheck disable=SC2086
    "$build/ftax-compare" "$set_dir/output_$j.pb" "$dir/eager/output_$j.pb" $tol || bad=1
    "$build/ftax-compare" "$dir/out/output_$j.pb" "$dir/eager/output_$j.pb" --atol 1e-5 --rtol 1e-4 || bad=1
    j=$((j + 1))
  done
  if [ $k -eq 0 ]; then
    echo "$name: the data set has no output_0.pb"
    return 2
  fi
  if [ $bad -ne 0 ]; then
    echo "$name: outputs differ beyond the tolerance ($tol); files kept in $dir"
    return 5
  fi
  echo "$name: pass ($k output(s), $tol)"
  return 0
}

if [ "$which" = all ]; then
  sets=$(ls -d "$model"/test_data_set_* 2>/dev/null | sort -V)
  [ -n "$sets" ] || { echo "$mname: no test_data_set_<N> in $model"; exit 2; }
else
  sets=$which
fi
passed=""
old_ifs=$IFS; IFS=$nl
for s in $sets; do
  IFS=$old_ifs
  run_set "$s"
  rc=$?
  [ $rc -eq 0 ] || exit $rc
  passed="$passed$work/${mname}_$(basename "$s")$nl"
  IFS=$nl
done
# the folders of passing sets go only now: a later set may have run an earlier set's program
for d in $passed; do rm -rf "$d"; done
IFS=$old_ifs
exit 0
