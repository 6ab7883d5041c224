#!/bin/sh
# The committed references of test models against ONNX Runtime: run ORT (bench/peers/ort_run.js)
# on each data set of tests/models/NAME and compare its outputs with the set's output_*.pb
# (build/ftax-compare, its default tolerance). The e2e tests compare ftaxc's programs with the
# same files, so a model passing both matches ORT end to end. Exits 1 if any output differs.
#
#   bench/ort_refs.sh [NAME...]        (default: if_alias vad_v5, the field-shaped If models)
set -u
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- if_alias vad_v5
[ -x build/ftax-compare ] || { echo "ort_refs: build first (cmake --build build)" >&2; exit 1; }
[ -d bench/peers/node_modules/onnxruntime-node ] || (cd bench/peers && npm ci --ignore-scripts >/dev/null) || exit 1
out=bench/out/ort_refs
fail=0
for m in "$@"; do
  for d in tests/models/"$m"/test_data_set_*; do
    o=$out/$m/$(basename "$d")
    rm -rf "$o" && mkdir -p "$o"
    node bench/peers/ort_run.js tests/models/"$m"/model.onnx "$d"/input_*.pb --output-dir "$o" || { fail=1; continue; }
    for f in "$d"/output_*.pb; do
      printf '%s %s: ' "$m" "$(basename "$d")"
      build/ftax-compare "$f" "$o/$(basename "$f")" || fail=1
    done
  done
done
exit $fail
