#!/bin/sh
# A committed model whose kernels are not all twinned for CUDA yet (MODEL_DIR/cuda_missing_twins,
# one kernel name per line, # comments allowed) instead of the cuda_* runs: ftaxc --target cuda
# must refuse it with exit 3, list exactly those kernels, and write nothing. When a twin lands,
# this fails until the kernel leaves the file (then the model gets the full CUDA tests).
#   missing_twins_test.sh BUILD_DIR MODEL_DIR DATA_SET_DIR WORK_DIR
build=$1; model=$2; set=$3; work=$4
name=cuda_missing_$(basename "$model")
dir="$work/$name"
rm -rf "$dir"; mkdir -p "$dir" || exit 4
log="$dir/log"
flags=$("$build/ftax-testtool" shape-flags "$model/model.onnx" "$set" 2>"$log") || {
  cat "$log"; echo "$name: cannot read the data set's shapes"; exit 2; }
set --
nl='
'
old_ifs=$IFS; IFS=$nl
for a in $flags; do set -- "$@" "$a"; done
IFS=$old_ifs
"$build/ftaxc" "$model/model.onnx" -o "$dir/prog" --target cuda --emit-only "$@" >"$log" 2>&1
rc=$?
[ $rc -eq 3 ] || { cat "$log"; echo "$name: ftaxc --target cuda exit $rc, expected 3"; exit 5; }
[ -e "$dir/prog.cu" ] && { echo "$name: a partial program was written"; exit 5; }
want=$(grep -v '^ *#' "$model/cuda_missing_twins" | grep -c .)
for k in $(grep -v '^ *#' "$model/cuda_missing_twins"); do
  grep -q "$k: no twin" "$log" || { cat "$log"; echo "$name: $k is not listed as missing"; exit 5; }
done
got=$(grep -o 'ft_[a-z0-9_]*: no twin' "$log" | sort -u | wc -l)
[ "$got" -eq "$want" ] || { cat "$log"; echo "$name: $got kernels missing, the file lists $want"; exit 5; }
echo "$name: pass ($want kernel(s) without a twin, as listed)"
rm -rf "$dir"
