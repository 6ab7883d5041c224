#!/bin/sh
# The main job on the bundled 2-layer BERT: compile it at batch 1, seq 8; check the program's
# outputs against torch's; then time the compiled program and ftax-eager (same kernels, op by
# op) and show the framework tax.
set -e
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build
# Only the three tools the demo runs. A fresh build folder is configured without the tests (they
# need more packages); one that scripts/test.sh configured keeps them.
if [ -f build/CMakeCache.txt ]; then
  cmake -S . -B build >/dev/null
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFTAX_TESTS=OFF >/dev/null
fi
cmake --build build -j"$(nproc)" --target ftaxc ftax-eager ftax-compare >/dev/null
model=tests/models/bert_tiny/model.onnx
data=tests/models/bert_tiny/test_data_set_0
out=generated/bert_tiny_b1
iters=${ITERS:-2000}

echo "== compile: ftaxc $model -o $out --dim batch=1 --dim seq=8 --report"
build/ftaxc $model -o $out --dim batch=1 --dim seq=8 --report

echo "== run on torch's reference inputs and compare"
rm -rf generated/demo_out
$out $data/input_0.pb $data/input_1.pb $data/input_2.pb --output-dir generated/demo_out
for k in 0 1; do build/ftax-compare $data/output_$k.pb generated/demo_out/output_$k.pb --atol 1e-4; done

echo "== the tax: $iters runs each, 1 thread"
$out --bench --warmup 200 --iters "$iters" --threads 1 --json > generated/demo_compiled.json
if [ -x build/ftax-eager ]; then
  build/ftax-eager $model --dim batch=1 --dim seq=8 --bench --warmup 200 --iters "$iters" --threads 1 --json > generated/demo_eager.json
  build/ftax-eager $model --dim batch=1 --dim seq=8 --profile --bench --warmup 50 --iters 200 --threads 1 | tail -n 22
fi
med() { sed 's/.*"median_ms": \([0-9.]*\).*/\1/' "$1"; }
c=$(med generated/demo_compiled.json)
printf '%-28s %10s\n' mode "median ms"
printf '%-28s %10.4f\n' "ftaxc (compiled)" "$c"
if [ -f generated/demo_eager.json ]; then
  e=$(med generated/demo_eager.json)
  printf '%-28s %10.4f\n' "ftax-eager (op by op)" "$e"
  awk -v e="$e" -v c="$c" 'BEGIN { printf "framework tax removed by compilation: %.2fx (eager / compiled)\n", e / c }'
fi
