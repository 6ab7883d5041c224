#!/bin/sh
# Builds and runs both serving examples on tests/models/bert_tiny (the ctest test examples_serve):
# serve.py --selftest compiles the model through ftax.InferenceSession into WORK/cache and checks
# concurrent HTTP requests; serve.c is then built against that cache entry's libmodel.so and
# model.h and serves 800 requests on 4 threads, each answer checked against a lone run.
#   examples/check.sh FTAXC PYTHON3 WORK
set -e
ftaxc=$1; py=$2; work=$3
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"
mkdir -p "$work"
FTAX_FTAXC=$ftaxc FTAX_CACHE=$work/cache "$py" "$src/examples/serve.py" "$src/tests/models/bert_tiny/model.onnx" \
  --dim batch=1 --dim seq=8 --cflags "-O1 -march=native -pthread" --selftest
entry=$(ls -d "$work"/cache/*/ | head -n 1)
cc -O2 -Wall -Wextra -Werror -pthread -I"$entry" "$src/examples/serve.c" -L"$entry" -lmodel -Wl,-rpath,"$entry" \
  -o "$work/serve"
"$work/serve" "$entry/model.weights" 4 800
