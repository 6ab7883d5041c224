#!/bin/sh
# Run one ONNX backend node test through ftaxc and the generated program.
#   run_node_test.sh BUILD_DIR TEST_DIR WORK_DIR
# Exit: 0 pass, 3 unsupported (ftaxc said so), other: failure. Prints one line why.
build=$1; test=$2; work=$3
name=$(basename "$test")
mkdir -p "$work" || exit 4
prog="$work/$name"
"$build/ftaxc" "$test/model.onnx" -o "$prog" --cflags "-O1 -march=native -fopenmp" >"$work/$name.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  echo "$name: ftaxc exit $rc: $(tail -n 1 "$work/$name.log")"
  exit $rc
fi
set -- "$test"/test_data_set_0/input_*.pb
[ -e "$1" ] || set --
rm -rf "$work/$name.out"
if ! "$prog" "$@" --output-dir "$work/$name.out" >>"$work/$name.log" 2>&1; then
  echo "$name: program failed: $(tail -n 1 "$work/$name.log")"
  exit 6
fi
for exp in "$test"/test_data_set_0/output_*.pb; do
  k=$(basename "$exp")
  if ! "$build/ftax-compare" "$exp" "$work/$name.out/$k" >>"$work/$name.log" 2>&1; then
    echo "$name: $k differs: $(tail -n 1 "$work/$name.log")"
    exit 5
  fi
done
echo "$name: pass"
rm -rf "$prog" "$prog.c" "$prog.h" "$prog.weights" "$work/$name.out" "$work/$name.log"
exit 0
