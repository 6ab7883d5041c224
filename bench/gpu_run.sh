#!/bin/bash
# The GPU session's one command: build, run the CUDA tests, measure BERT-base (batch 1, seq 128)
# and ResNet-50 (batch 1) compiled by ftax (fp32, fp32 + CUDA graph, fp16 + CUDA graph) next to
# PyTorch eager and torch.compile(mode="reduce-overhead") when torch with CUDA is there.
# Meant to finish within 10 minutes on an H100; installs nothing, needs no network.
#
#   bench/gpu_run.sh [--quick]       (--quick: fewer iterations, no torch.compile)
#
# Needs nvcc (CUDA 12+, cuBLASLt and cuDNN 9 headers and libraries: the toolkit's, or the
# nvidia-cudnn-cu* Python package's, found automatically) and either what ftax's CMake build
# needs (protobuf-c, onnx.proto) or the host tools bench/gpu_prep.sh puts in build-gpu-tools/
# (carry that folder along: it is ignored by git). Models are exported on the spot with
# bench/models/export.py (through bench/gpu/export_models.py, which picks torch's TorchScript
# exporter), so python3 with torch, torchvision and onnx is needed for the measurements.
#
# Writes bench/results/<gpu name>/: summary.md (the tables), results.jsonl (one line per
# measurement), tests.txt (the GPU test results), log.txt; copies them to $OUT when set.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
start=$(date +%s)
quick=0
[ "${1:-}" = --quick ] && quick=1
iters=300; warmup=50
[ $quick = 1 ] && { iters=50; warmup=10; }
deadline=$((start + 9 * 60)) # leave a minute for the summary

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$gpu" ] || gpu=$(python3 -c 'import torch; print(torch.cuda.get_device_name(0))' 2>/dev/null)
[ -n "$gpu" ] || gpu=unknown-gpu
slug=$(printf '%s' "$gpu" | tr -c 'A-Za-z0-9._-' '_' | sed 's/__*/_/g; s/_$//')
res="$root/bench/results/$slug"
mkdir -p "$res"
log="$res/log.txt"
: >"$log"
: >"$res/results.jsonl"
: >"$res/tests.txt"
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$log"; }
left() { echo $(( deadline - $(date +%s) )); }
finish() {
  python3 bench/gpu/summarize.py "$res/results.jsonl" >"$res/summary.md" 2>>"$log" || true
  { echo "# ftax CUDA backend on $gpu"; echo; echo "Tests:"; echo; sed 's/^/    /' "$res/tests.txt"; echo; cat "$res/summary.md"; } >"$res/summary.tmp" && mv "$res/summary.tmp" "$res/summary.md"
  if [ -n "${OUT:-}" ]; then cp "$res"/summary.md "$res"/results.jsonl "$res"/tests.txt "$res"/log.txt "$OUT"/ 2>/dev/null; fi
  say "done in $(( $(date +%s) - start ))s; results in bench/results/$slug"
}

say "GPU: $gpu"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >>"$log" 2>&1
nvcc --version | tail -n 2 >>"$log" 2>&1 || { say "no nvcc: cannot build CUDA programs"; finish; exit 1; }
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' >>"$log" 2>&1

# ---- host tools: build ftax, or use bench/gpu_prep.sh's ----
B=""
if cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1 &&
   cmake --build build-gpu -j"$(nproc)" --target ftaxc ftax-compare ftax-testtool >>"$log" 2>&1; then
  B="$root/build-gpu"
  say "built ftax in build-gpu"
elif [ -x build-gpu-tools/ftaxc ] && LD_LIBRARY_PATH="$root/build-gpu-tools" build-gpu-tools/ftaxc --version >>"$log" 2>&1; then
  B="$root/build-gpu-tools"
  export LD_LIBRARY_PATH="$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "cannot build ftax here (see log.txt); using bench/gpu_prep.sh's tools in build-gpu-tools"
else
  say "cannot build ftax here and there is no build-gpu-tools/ (run bench/gpu_prep.sh where ftax builds, carry the folder)"
  finish; exit 1
fi
nvcc -O2 -o "$B/ftax-cuda-probe" tests/cuda/probe.cu >>"$log" 2>&1 || { say "nvcc cannot build the probe"; finish; exit 1; }
# FTAX_GPU_RUN_DRY=1 goes on without a device (to check this script on a machine without one)
probe=$("$B/ftax-cuda-probe") || { say "probe: $probe"; [ "${FTAX_GPU_RUN_DRY:-}" = 1 ] || { finish; exit 1; }; }
say "device: $probe"

# ---- cuBLASLt and cuDNN: the toolkit's, or the Python wheels' (no lib*.so link there) ----
cat >"$B/linkcheck.cu" <<'EOF'
#include <cublasLt.h>
#include <cudnn.h>
int main() { cublasLtHandle_t h; cudnnHandle_t d; return (int)cublasLtCreate(&h) + (int)cudnnCreate(&d) * 0; }
EOF
if ! nvcc -o "$B/linkcheck" "$B/linkcheck.cu" -lcublasLt -lcudnn >>"$log" 2>&1; then
  extra=""
  mkdir -p "$B/cudalibs"
  for pkg in cudnn cublas; do
    d=$(python3 -c "import nvidia.$pkg, os; print(list(nvidia.$pkg.__path__)[0])" 2>/dev/null) || continue
    [ -d "$d/include" ] && extra="$extra -I$d/include"
    for so in "$d"/lib/lib*.so.*; do
      [ -e "$so" ] || continue
      base=$(basename "$so"); ln -sf "$so" "$B/cudalibs/${base%%.so.*}.so"
    done
    extra="$extra -L$B/cudalibs -Xlinker -rpath=$d/lib"
  done
  export FTAX_NVCC_FLAGS="$extra"
  nvcc -o "$B/linkcheck" "$B/linkcheck.cu" -lcublasLt -lcudnn $FTAX_NVCC_FLAGS >>"$log" 2>&1 ||
    say "warning: cannot link cuBLASLt and cuDNN even with the Python packages' copies ($FTAX_NVCC_FLAGS)"
  say "cuBLASLt/cuDNN flags: $FTAX_NVCC_FLAGS"
fi

# ---- the GPU tests: every committed model, fp32 and fp16, with and without a CUDA graph ----
work="$root/build-gpu-tests"
mkdir -p "$work"
jobs=$(nproc); [ "$jobs" -gt 8 ] && jobs=8
export FTAX_CUDA_TEST_CFLAGS=-O3
n=0
for m in bert_tiny distilbert_tiny gpt2_tiny cnn_small; do
  for p in fp32 fp16; do
    for gr in nograph graph; do
      sh tests/cuda/run_cuda_test.sh compile "$B" "tests/models/$m" "tests/models/$m/test_data_set_0" "$work" $p $gr \
        >"$work/${m}_${p}_$gr.compile.txt" 2>&1 &
      n=$((n + 1))
      [ $((n % jobs)) = 0 ] && wait
    done
  done
done
wait
for m in bert_tiny distilbert_tiny gpt2_tiny cnn_small; do
  for p in fp32 fp16; do
    for gr in nograph graph; do
      tail -n 1 "$work/${m}_${p}_$gr.compile.txt" >>"$res/tests.txt"
      sh tests/cuda/run_cuda_test.sh gpu "$B" "tests/models/$m" "tests/models/$m/test_data_set_0" "$work" $p $gr >>"$res/tests.txt" 2>&1
      echo "  (exit $?)" >>"$res/tests.txt"
    done
  done
done
say "GPU tests: $(grep -c ': pass on' "$res/tests.txt") passed of 16 (tests.txt)"

# ---- the models: exported here (the reference outputs are torch's, on the CPU) ----
zoo="$root/build-gpu-zoo" # ignored by git, as build*/ is
mkdir -p "$zoo"
for m in bert_base resnet50; do
  if [ ! -e "$zoo/$m/model.onnx" ]; then
    timeout 300 python3 bench/gpu/export_models.py --out "$zoo" "$m" >>"$log" 2>&1 || say "export of $m failed (log.txt)"
  fi
done
say "exported: $(ls "$zoo" 2>/dev/null | tr '\n' ' ')"

# ---- ftax: compile every configuration (in parallel), check against the reference, bench ----
configs="fp32 fp32+graph tf32+graph fp16+graph"
for m in bert_base resnet50; do
  [ -e "$zoo/$m/model.onnx" ] || continue
  dims="--dim batch=1"; [ $m = bert_base ] && dims="$dims --dim seq=128"
  for cfg in $configs; do
    prec=${cfg%%+*}; g=""; [ "$cfg" != "$prec" ] && g=--cuda-graph
    d="$work/$m-${cfg/+/-}"
    mkdir -p "$d"
    ( timeout 400 "$B/ftaxc" "$zoo/$m/model.onnx" -o "$d/prog" $dims --target cuda --precision $prec $g >"$d/compile.log" 2>&1 ) &
  done
done
wait
for m in bert_base resnet50; do
  [ -e "$zoo/$m/model.onnx" ] || continue
  set0="$zoo/$m/test_data_set_0"
  ins=""; n=0; while [ -e "$set0/input_$n.pb" ]; do ins="$ins $set0/input_$n.pb"; n=$((n + 1)); done
  for cfg in $configs; do
    d="$work/$m-${cfg/+/-}"
    if [ ! -x "$d/prog" ]; then
      say "$m $cfg: ftaxc failed: $(tail -n 3 "$d/compile.log" | tr '\n' ' ')"
      echo "{\"system\": \"ftax\", \"model\": \"$m\", \"config\": \"$cfg\", \"error\": \"ftaxc failed\"}" >>"$res/results.jsonl"
      continue
    fi
    if [ "$(left)" -lt 60 ]; then say "$m $cfg: out of time"; continue; fi
    rm -rf "$d/out"
    err=""
    if FTAX_CUDA_VERBOSE=1 timeout 120 "$d/prog" $ins --output-dir "$d/out" >"$d/run.log" 2>&1; then
      { echo "--- $m $cfg: plans"; grep '^ftax-cuda' "$d/run.log" | sort | uniq -c | sort -rn | head -n 20; } >>"$log"
      k=0
      while [ -e "$set0/output_$k.pb" ]; do
        err="$err$("$B/ftax-compare" "$set0/output_$k.pb" "$d/out/output_$k.pb" --atol 1e9 | sed 's/.*max abs err \([^,]*\),.*/\1/') "
        k=$((k + 1))
      done
    else
      say "$m $cfg: the program failed: $(tail -n 2 "$d/run.log" | tr '\n' ' ')"
      echo "{\"system\": \"ftax\", \"model\": \"$m\", \"config\": \"$cfg\", \"error\": \"run failed\"}" >>"$res/results.jsonl"
      continue
    fi
    wdt=$(timeout 120 "$d/prog" --bench --warmup $warmup --iters $iters --json $ins 2>>"$d/run.log" | tail -n 1)
    nodt=$(timeout 120 "$d/prog" --bench --warmup $warmup --iters $iters --json --no-data-transfers $ins 2>>"$d/run.log" | tail -n 1)
    [ -n "$wdt" ] || wdt='{}'
    [ -n "$nodt" ] || nodt='{}'
    echo "{\"system\": \"ftax\", \"model\": \"$m\", \"config\": \"$cfg\", \"max_abs_err\": \"${err% }\", \"wdt\": $wdt, \"nodt\": $nodt}" >>"$res/results.jsonl"
    say "$m $cfg: max abs err ${err% }; $(echo "$nodt" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("GPU compute %.3f ms, latency %.3f ms (no transfers)" % (r["gpu_compute_ms"]["median"], r["host_latency_ms"]["median"]))' 2>/dev/null)"
  done
done

# ---- PyTorch peers ----
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  modes=eager,compile; [ $quick = 1 ] && modes=eager
  models=""; for m in bert_base resnet50; do [ -e "$zoo/$m/model.onnx" ] && models="$models --model $m"; done
  if [ -n "$models" ] && [ "$(left)" -gt 30 ]; then
    timeout "$(left)" python3 bench/gpu/torch_peer.py --zoo "$zoo" $models --modes $modes --precisions fp32,fp16 \
      --warmup $warmup --iters $iters --deadline "$((deadline - 60))" >>"$res/results.jsonl" 2>>"$log" || say "torch peers stopped (log.txt)"
    say "torch peers: $(grep -c '"system": "torch"' "$res/results.jsonl") runs"
  fi
else
  say "no torch with CUDA: no PyTorch peers"
fi
finish
