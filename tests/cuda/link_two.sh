#!/bin/sh
# Two generated CUDA programs link into one binary through their C APIs (OUT.h is extern "C",
# everything else in OUT.cu is static or prefixed), built with -D<NAME>_NO_MAIN, and the
# combined program starts (without a device both inits fail loudly; with one they succeed).
#   link_two.sh BUILD_DIR SOURCE_DIR WORK_DIR
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work" || exit 4
nvcc=${NVCC:-nvcc}
"$build/ftaxc" "$src/tests/models/cnn_small/model.onnx" -o "$work/cnn" --dim batch=1 --target cuda --emit-only >"$work/log" 2>&1 &&
"$build/ftaxc" "$src/tests/models/bert_tiny/model.onnx" -o "$work/bert" --dim batch=1 --dim seq=8 --target cuda --precision fp16 --emit-only >>"$work/log" 2>&1 ||
  { cat "$work/log"; echo "link_two: ftaxc failed"; exit 2; }
cat >"$work/main.c" <<'EOC'
#include <stdio.h>
#include "bert.h"
#include "cnn.h"
int main(int argc, char **argv) {
  char err[512];
  cnn_ctx *a = NULL;
  bert_ctx *b = NULL;
  int ra = cnn_init(&a, argv[1], err, sizeof err);
  printf("cnn: %s\n", ra ? err : "ready");
  int rb = bert_init(&b, argv[2], err, sizeof err);
  printf("bert: %s\n", rb ? err : "ready");
  cnn_free(a);
  bert_free(b);
  return argc == 3 ? 0 : 1;
}
EOC
cd "$work" || exit 4
$nvcc -std=c++17 -O1 -arch=sm_90 -c cnn.cu -DCNN_NO_MAIN -o cnn.o >>log 2>&1 &&
$nvcc -std=c++17 -O1 -arch=sm_90 -c bert.cu -DBERT_NO_MAIN -o bert.o >>log 2>&1 &&
${CC:-cc} -c main.c -o main.o >>log 2>&1 &&
$nvcc -o two main.o cnn.o bert.o -lcublasLt -lcudnn >>log 2>&1 || { cat log; echo "link_two: the two programs do not link together"; exit 5; }
./two cnn.weights bert.weights || { echo "link_two: the combined program failed"; exit 6; }
echo "link_two: two models in one binary"
