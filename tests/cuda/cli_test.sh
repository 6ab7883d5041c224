#!/bin/sh
# ftaxc's --target cuda front end, no nvcc needed: every kernel without a CUDA twin is listed at
# once (exit 3), CUDA options need --target cuda (exit 1), and --emit-only writes OUT.cu, OUT.h
# and OUT.weights that mention the options asked for.
#   cli_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work" || exit 4
fail() { echo "cuda cli: $*"; exit 5; }

"$build/ftaxc" "$src/tests/cuda/missing_twins.onnx" -o "$work/mt" --target cuda --emit-only >"$work/mt.log" 2>&1
rc=$?
[ $rc -eq 3 ] || { cat "$work/mt.log"; fail "missing twins: exit $rc, expected 3"; }
grep -q "ft_convtranspose_f32" "$work/mt.log" && grep -q "ft_trilu_4" "$work/mt.log" || { cat "$work/mt.log"; fail "not every missing kernel is listed"; }
grep -q "ft_relu" "$work/mt.log" && { cat "$work/mt.log"; fail "Relu has a twin but is listed"; }
[ -e "$work/mt.cu" ] && fail "a partial program was written"

"$build/ftaxc" "$src/tests/models/cnn_small/model.onnx" --precision fp16 -o "$work/x" >"$work/p.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/p.log"; fail "--precision without --target cuda: exit $rc, expected 1"; }
grep -q "needs --target cuda" "$work/p.log" || { cat "$work/p.log"; fail "--precision fp16 on the C target: no reason given"; }
"$build/ftaxc" "$src/tests/models/cnn_small/model.onnx" --precision bf16 --target cuda -o "$work/x" >"$work/p.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/p.log"; fail "--precision bf16 with --target cuda: exit $rc, expected 1"; }
grep -q "bf16 is for the C target" "$work/p.log" || { cat "$work/p.log"; fail "--precision bf16 --target cuda: no reason given"; }

"$build/ftaxc" "$src/tests/models/cnn_small/model.onnx" --dim batch=1 -o "$work/cnn" --target cuda --precision fp16 \
  --cuda-graph --arch sm_80 --emit-only >"$work/e.log" 2>&1 || { cat "$work/e.log"; fail "--emit-only failed"; }
for f in cnn.cu cnn.h cnn.weights; do [ -s "$work/$f" ] || fail "$f was not written"; done
grep -q "precision: fp16, CUDA graph: yes, arch: sm_80" "$work/cnn.cu" || fail "the header comment does not record the options"
grep -q "ftc_conv<__half>" "$work/cnn.cu" || fail "fp16 convolutions do not use the half twin"
grep -q "int cnn_enqueue(cnn_ctx \*ctx);" "$work/cnn.h" || fail "cnn.h lacks the asynchronous API"
echo "cuda cli: pass"
