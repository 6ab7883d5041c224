#!/bin/sh
# Run one ONNX backend node test through ftaxc and the generated program.
#   run_node_test.sh BUILD_DIR TEST_DIR WORK_DIR
# Every test_data_set_N/ of the test is run (inputs in numeric order: input_2 before input_10)
# and each output_K.pb compared with ftax-compare (rtol 1e-3, atol 1e-5; integers exact).
# Exit: 0 pass, 3 unsupported (ftaxc said so), other: failure. Prints one line why.
build=$1; test=$2; work=$3
name=$(basename "$test")
mkdir -p "$work" || exit 4
prog="$work/$name"
log="$work/$name.log"
"$build/ftaxc" "$test/model.onnx" -o "$prog" --cflags "-O1 -march=native -fopenmp" >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  echo "$name: ftaxc exit $rc: $(tail -n 1 "$log")"
  exit $rc
fi
for set in "$test"/test_data_set_*/; do
  [ -d "$set" ] || continue
  set=${set%/}
  # the input files in numeric order
  n=0
  set --
  while [ -e "$set/input_$n.pb" ]; do set -- "$@" "$set/input_$n.pb"; n=$((n + 1)); done
  out="$work/$name.out"
  rm -rf "$out"
  if ! "$prog" "$@" --output-dir "$out" >>"$log" 2>&1; then
    echo "$name: program failed on $(basename "$set"): $(tail -n 1 "$log")"
    exit 6
  fi
  k=0
  while [ -e "$set/output_$k.pb" ]; do
    if ! "$build/ftax-compare" "$set/output_$k.pb" "$out/output_$k.pb" >>"$log" 2>&1; then
      echo "$name: $(basename "$set")/output_$k.pb differs: $(tail -n 1 "$log")"
      exit 5
    fi
    k=$((k + 1))
  done
done
echo "$name: pass"
rm -rf "$prog" "$prog.c" "$prog.h" "$prog.weights" "$work/$name.out" "$log"
exit 0
