#!/bin/sh
# Run one ONNX backend node test through ftaxc and the generated program.
#   run_node_test.sh BUILD_DIR TEST_DIR WORK_DIR
# The program is built at -Og (an optimizing compile that takes a quarter less time than -O1
# over the node tests), or with $FTAX_PROGRAM_CFLAGS when set (the sanitizer build).
# Exit: 0 pass, 3 unsupported (ftaxc said so), other: failure. Prints one line why.
# Node tests often feed shape operands (Reshape's shape, Slice's starts...) as inputs; ftaxc
# specializes on them when they are bound to the test's values with --bind, which is what a user
# does with such a model, so the runner binds exactly the inputs ftaxc asks for.
build=$1; test=$2; work=$3
name=$(basename "$test")
data="$test/test_data_set_0"
mkdir -p "$work" || exit 4
prog="$work/$name"
log="$work/$name.log"
binds=""
bound=" "
tries=0
while :; do
  # shellcheck disable=SC2086
  "$build/ftaxc" "$test/model.onnx" -o "$prog" --cflags "${FTAX_PROGRAM_CFLAGS:--Og -march=native -pthread}" $binds >"$log" 2>&1
  rc=$?
  k=$(sed -n "s/.*is graph input #\([0-9]*\) '\([^']*\)'.*/\1/p" "$log" | head -n 1)
  n=$(sed -n "s/.*is graph input #\([0-9]*\) '\([^']*\)'.*/\2/p" "$log" | head -n 1)
  [ $rc -eq 3 ] && [ -n "$k" ] && [ $tries -lt 8 ] || break
  # input numbers count the inputs still unbound: map back to the file index
  idx=0; seen=0
  while :; do
    case "$bound" in *" $idx "*) ;; *) [ $seen -eq "$k" ] && break; seen=$((seen + 1)) ;; esac
    idx=$((idx + 1))
  done
  binds="$binds --bind $n=$data/input_$idx.pb"
  bound="$bound$idx "
  tries=$((tries + 1))
done
if [ $rc -ne 0 ]; then
  echo "$name: ftaxc exit $rc: $(tail -n 1 "$log")"
  exit $rc
fi
set --
i=0
while [ -e "$data/input_$i.pb" ]; do
  case "$bound" in *" $i "*) ;; *) set -- "$@" "$data/input_$i.pb" ;; esac
  i=$((i + 1))
done
rm -rf "$work/$name.out"
if ! "$prog" "$@" --output-dir "$work/$name.out" >>"$log" 2>&1; then
  echo "$name: program failed: $(tail -n 1 "$log")"
  exit 6
fi
for exp in "$data"/output_*.pb; do
  k=$(basename "$exp")
  if ! "$build/ftax-compare" "$exp" "$work/$name.out/$k" >>"$log" 2>&1; then
    echo "$name: $k differs: $(tail -n 1 "$log")"
    exit 5
  fi
done
echo "$name: pass${binds:+ (bound:$bound)}"
rm -rf "$prog" "$prog.c" "$prog.h" "$prog.weights" "$work/$name.out" "$log"
exit 0
