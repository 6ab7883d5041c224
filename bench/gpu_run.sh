#!/bin/bash
# The GPU session's one command: build, run the CUDA tests, measure BERT-base (batch 1, seq 128)
# and ResNet-50 (batch 1) on the GPU: ftax-eager --device cuda (op by op, with the --profile
# split of GPU kernel time and framework overhead: the paper's Figure 3), the programs ftaxc
# compiles (fp32, fp32 + CUDA graph, tf32 + graph, fp16 + graph), and PyTorch eager, TorchScript
# and torch.compile(mode="reduce-overhead") when torch with CUDA is there.
# Meant to finish within 10 minutes on an H100 or H200; installs nothing, needs no network.
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
#
# Environment: FTAX_GPU_RUN_DRY=1 goes on without a device (to check this script on a machine
# without one: every measurement is then written as not measured, and the results go to
# bench/out/gpu_run_dry/ instead of bench/results/); FTAX_GPU_ZOO=DIR takes the models from DIR
# (DIR/bert_base/model.onnx and test_data_set_0, as export.py writes them) instead of exporting
# them; FTAX_GPU_PYTHON names the Python with torch (default python3).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
start=$(date +%s)
quick=0
[ "${1:-}" = --quick ] && quick=1
iters=300; warmup=50
[ $quick = 1 ] && { iters=50; warmup=10; }
deadline=$((start + 9 * 60)) # leave a minute for the summary
dry=${FTAX_GPU_RUN_DRY:-0}
py=${FTAX_GPU_PYTHON:-python3}
models="bert_base resnet50"

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$gpu" ] || gpu=$("$py" -c 'import torch; print(torch.cuda.get_device_name(0))' 2>/dev/null)
[ -n "$gpu" ] || gpu=unknown-gpu
slug=$(printf '%s' "$gpu" | tr -c 'A-Za-z0-9._-' '_' | sed 's/__*/_/g; s/_$//')
res="$root/bench/results/$slug"
[ "$dry" = 1 ] && res="$root/bench/out/gpu_run_dry/$slug" # a dry run is no result to commit
mkdir -p "$res"
log="$res/log.txt"
: >"$log"
: >"$res/results.jsonl"
: >"$res/tests.txt"
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$log"; }
left() { echo $(( deadline - $(date +%s) )); }
# record KEY=VALUE... : one JSON line in results.jsonl (KEY:=JSON for a value that is JSON)
record() {
  "$py" -c '
import json, sys
r = {}
for a in sys.argv[1:]:
    k, _, v = a.partition("=")
    if k.endswith(":"):
        try:
            r[k[:-1]] = json.loads(v)
        except ValueError:
            r[k[:-1]] = None
    else:
        r[k] = v
print(json.dumps(r))' "$@" >>"$res/results.jsonl"
}
finish() {
  "$py" bench/gpu/summarize.py "$res/results.jsonl" >"$res/summary.md" 2>>"$log" || say "summarize.py failed (log.txt)"
  {
    echo "# ftax CUDA backend on $gpu"; echo
    cat "$res/summary.md"
    echo "## Tests"; echo
    echo "CUDA programs of the committed models (fp32/fp16, with and without a CUDA graph): $(grep -c ': pass on' "$res/tests.txt") of 16 pass, $(grep -c ': skipped' "$res/tests.txt") skipped; ftax-eager --device cuda: $(grep -c '^eager_gpu_.*: pass' "$res/tests.txt") of $(grep -c '^eager_gpu_' "$res/tests.txt") pass."
    echo; sed 's/^/    /' "$res/tests.txt"
  } >"$res/summary.tmp" && mv "$res/summary.tmp" "$res/summary.md"
  if [ -n "${OUT:-}" ]; then cp "$res"/summary.md "$res"/results.jsonl "$res"/tests.txt "$res"/log.txt "$OUT"/ 2>/dev/null; fi
  say "done in $(( $(date +%s) - start ))s; results in ${res#"$root"/}"
}
# the lib folders of the nvidia-* Python packages (cuDNN, cuBLAS... where the toolkit lacks them)
wheel_libdirs() {
  "$py" -c '
import os
try:
    import nvidia
except ImportError:
    raise SystemExit
for base in list(nvidia.__path__):
    for d, _, files in os.walk(base):
        if any(f.startswith("lib") and ".so" in f for f in files):
            print(d)' 2>/dev/null
}

say "GPU: $gpu"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >>"$log" 2>&1
nvcc --version | tail -n 2 >>"$log" 2>&1 || { say "no nvcc: cannot build CUDA programs"; record system=machine gpu="$gpu" no_device="no nvcc: nothing built"; finish; exit 1; }
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' >>"$log" 2>&1

# ---- host tools: build ftax, or use bench/gpu_prep.sh's ----
B=""
if cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1 &&
   cmake --build build-gpu -j"$(nproc)" --target ftaxc ftax-compare ftax-testtool >>"$log" 2>&1; then
  B="$root/build-gpu"
  say "built ftax in build-gpu"
  # ftax-eager on its own: with CUDA where CMake found nvcc; its failure leaves the rest
  cmake --build build-gpu -j"$(nproc)" --target ftax-eager >>"$log" 2>&1 || say "ftax-eager did not build (log.txt)"
elif [ -x build-gpu-tools/ftaxc ]; then
  B="$root/build-gpu-tools"
  # of the libraries gpu_prep.sh copied, only those this machine lacks go on the library path
  # (a copied libstdc++ or libgomp older than this machine's would break torch and nvcc)
  rm -rf "$B/need"; mkdir -p "$B/need"
  for b in "$B"/ftax*; do ldd "$b" 2>/dev/null | awk '/not found/ {print $1}'; done | sort -u | while read -r lib; do
    if [ -e "$B/lib/$lib" ]; then ln -sf "$B/lib/$lib" "$B/need/$lib"; elif [ -e "$B/$lib" ]; then ln -sf "$B/$lib" "$B/need/$lib"; fi
  done
  export LD_LIBRARY_PATH="$B/need${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  "$B/ftaxc" --version >>"$log" 2>&1 || { say "build-gpu-tools/ftaxc does not start here: $(ldd "$B/ftaxc" 2>&1 | grep 'not found' | tr '\n' ' ')"; record system=machine gpu="$gpu" no_device="no ftax tools that start here"; finish; exit 1; }
  say "cannot build ftax here (see log.txt); using bench/gpu_prep.sh's tools in build-gpu-tools (libraries from it: $(ls "$B/need" | tr '\n' ' '))"
  [ -e "$B/BUILD_INFO" ] && sed 's/^/  build-gpu-tools: /' "$B/BUILD_INFO" >>"$log"
else
  say "cannot build ftax here and there is no build-gpu-tools/ (run bench/gpu_prep.sh where ftax builds, carry the folder)"
  record system=machine gpu="$gpu" no_device="no ftax tools: nothing built"
  finish; exit 1
fi
nvcc -O2 -o "$B/ftax-cuda-probe" tests/cuda/probe.cu >>"$log" 2>&1 || { say "nvcc cannot build the probe"; record system=machine gpu="$gpu" no_device="nvcc cannot build the device probe"; finish; exit 1; }
# FTAX_GPU_RUN_DRY=1 goes on without a device (to check this script on a machine without one)
has_device=1
probe=$("$B/ftax-cuda-probe") || {
  has_device=0
  say "probe: $probe"
  [ "$dry" = 1 ] || { record system=machine gpu="$gpu" no_device="$probe"; finish; exit 1; }
}
say "device: $probe"
if [ $has_device = 1 ]; then
  record system=machine gpu="$gpu" device="$probe" quick:=$quick dry:=$dry
else
  record system=machine gpu="$gpu" no_device="$probe" quick:=$quick dry:=$dry
fi

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
    d=$("$py" -c "import nvidia.$pkg, os; print(list(nvidia.$pkg.__path__)[0])" 2>/dev/null) || continue
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

# ---- run-time libraries: what the CUDA programs and ftax-eager link (libcudart, libcublasLt,
# libcudnn) must be found by the loader too; add the folders that hold what ldd cannot find ----
# find_libs BIN: put on LD_LIBRARY_PATH the folder of every library BIN needs that the loader
# does not find, from the toolkit or the nvidia-* Python packages
find_libs() {
  ldd "$1" 2>/dev/null | awk '/not found/ {print $1}' | sort -u >"$B/missing.txt"
  [ -s "$B/missing.txt" ] || return 0
  tk=$(dirname "$(dirname "$(command -v nvcc)")")
  for d in "$tk/lib64" "$tk/lib" "$tk/targets/x86_64-linux/lib" /usr/local/cuda/lib64 $(wheel_libdirs); do
    [ -d "$d" ] || continue
    while read -r lib; do
      if [ -e "$d/$lib" ]; then
        case ":${LD_LIBRARY_PATH:-}:" in *":$d:"*) ;; *) LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d" ;; esac
      fi
    done <"$B/missing.txt"
  done
  export LD_LIBRARY_PATH
  say "$(basename "$1"): $(tr '\n' ' ' <"$B/missing.txt")not on the loader's path; LD_LIBRARY_PATH now $LD_LIBRARY_PATH"
}
[ -x "$B/linkcheck" ] && find_libs "$B/linkcheck"
eager="$B/ftax-eager"
eager_why="" # why ftax-eager --device cuda cannot run here, when it cannot
if [ ! -x "$eager" ]; then
  eager_why="no ftax-eager in ${B#"$root"/} (it did not build: log.txt)"
else
  { echo "--- ldd ftax-eager"; ldd "$eager"; } >>"$log" 2>&1
  find_libs "$eager"
  missing=$(ldd "$eager" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  [ -n "$missing" ] && eager_why="ftax-eager cannot start: ${missing% } not found (built against another CUDA? see build-gpu-tools/BUILD_INFO)"
fi
[ -n "$eager_why" ] && say "$eager_why"
# what a later command needs to use these tools the same way (bench/sweep --build "$B")
{ echo "export LD_LIBRARY_PATH='${LD_LIBRARY_PATH:-}'"; echo "export FTAX_NVCC_FLAGS='${FTAX_NVCC_FLAGS:-}'"; } >"$B/env.sh"

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

# ---- ftax-eager --device cuda on the committed models, against their references ----
# First, can it run at all here (built with CUDA, a device, code for it)? The answer is the
# same for every model: eager_why says why not.
if [ -z "$eager_why" ]; then
  m=tests/models/cnn_small
  shape=$("$B/ftax-testtool" shape-flags "$m/model.onnx" "$m/test_data_set_0" 2>>"$log" | tr '\n' ' ')
  rm -rf "$work/eager-check"
  # shellcheck disable=SC2086
  timeout 120 "$eager" "$m/model.onnx" --device cuda $shape "$m/test_data_set_0/input_0.pb" \
    --output-dir "$work/eager-check" >"$work/eager-check.log" 2>&1
  rc=$?
  msg=$(grep -v '^$' "$work/eager-check.log" | tail -n 1)
  if [ $rc = 0 ]; then :
  elif grep -q 'no CUDA device' "$work/eager-check.log"; then eager_why=$(grep -m 1 -o 'no CUDA device[^;]*' "$work/eager-check.log")
  elif [ $rc = 1 ] || grep -q 'no GPU code' "$work/eager-check.log"; then eager_why="ftax-eager cannot run on the GPU here: $msg"
  else eager_why="ftax-eager --device cuda failed on cnn_small (exit $rc): $msg"
  fi
fi
for d in tests/models/*/; do
  m=$(basename "$d")
  [ -e "$d/model.onnx" ] && [ -e "$d/test_data_set_0/output_0.pb" ] || continue
  if [ -n "$eager_why" ]; then echo "eager_gpu_$m: not run: $eager_why" >>"$res/tests.txt"; continue; fi
  timeout 300 sh tests/cuda/eager_cuda_test.sh gpu "$B" "tests/models/$m" "tests/models/$m/test_data_set_0" "$work" >"$work/eager_gpu_$m.txt" 2>&1
  rc=$?
  tail -n 1 "$work/eager_gpu_$m.txt" >>"$res/tests.txt"
  echo "  (exit $rc)" >>"$res/tests.txt"
done
say "ftax-eager --device cuda: $(grep -c '^eager_gpu_.*: pass' "$res/tests.txt") of $(grep -c '^eager_gpu_' "$res/tests.txt") committed models pass${eager_why:+ ($eager_why)}"

# ---- the models: exported here (the reference outputs are torch's, on the CPU) ----
zoo="${FTAX_GPU_ZOO:-$root/build-gpu-zoo}" # build-gpu-zoo is ignored by git, as build*/ is
mkdir -p "$zoo"
for m in $models; do # both at once (each is mostly torch on the CPU computing the reference)
  [ -e "$zoo/$m/model.onnx" ] && continue
  ( timeout 300 "$py" bench/gpu/export_models.py --out "$zoo" "$m" >"$work/export-$m.log" 2>&1
    echo $? >"$work/export-$m.rc" ) &
done
wait
for m in $models; do
  [ -e "$work/export-$m.rc" ] || continue
  cat "$work/export-$m.log" >>"$log"
  if [ "$(cat "$work/export-$m.rc")" != 0 ] || [ ! -e "$zoo/$m/model.onnx" ]; then
    say "export of $m failed: $(tail -n 1 "$work/export-$m.log")"
    record system=export model="$m" error="export of $m failed: $(tail -n 1 "$work/export-$m.log")"
  fi
  rm -f "$work/export-$m.rc"
done
say "models in ${zoo#"$root"/}: $(for m in $models; do [ -e "$zoo/$m/model.onnx" ] && printf '%s ' $m; done)"

# ---- ftax: compile every configuration (in parallel), check against the reference, bench ----
configs="fp32 fp32+graph tf32+graph fp16+graph"
for m in $models; do
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
for m in $models; do
  [ -e "$zoo/$m/model.onnx" ] || continue
  set0="$zoo/$m/test_data_set_0"
  ins=""; n=0; while [ -e "$set0/input_$n.pb" ]; do ins="$ins $set0/input_$n.pb"; n=$((n + 1)); done
  for cfg in $configs; do
    d="$work/$m-${cfg/+/-}"
    if [ ! -x "$d/prog" ]; then
      say "$m $cfg: ftaxc failed: $(tail -n 3 "$d/compile.log" | tr '\n' ' ')"
      record system=ftax model="$m" config="$cfg" error="ftaxc failed: $(tail -n 1 "$d/compile.log")"
      continue
    fi
    if [ $has_device = 0 ]; then
      record system=ftax model="$m" config="$cfg" not_measured="$probe (the program was built)"
      continue
    fi
    if [ "$(left)" -lt 60 ]; then say "$m $cfg: out of time"; record system=ftax model="$m" config="$cfg" not_measured="out of time"; continue; fi
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
      record system=ftax model="$m" config="$cfg" error="run failed: $(tail -n 1 "$d/run.log")"
      continue
    fi
    wdt=$(timeout 120 "$d/prog" --bench --warmup $warmup --iters $iters --json $ins 2>>"$d/run.log" | tail -n 1)
    nodt=$(timeout 120 "$d/prog" --bench --warmup $warmup --iters $iters --json --no-data-transfers $ins 2>>"$d/run.log" | tail -n 1)
    [ -n "$wdt" ] || wdt='{}'
    [ -n "$nodt" ] || nodt='{}'
    record system=ftax model="$m" config="$cfg" max_abs_err="${err% }" wdt:="$wdt" nodt:="$nodt"
    say "$m $cfg: max abs err ${err% }; $(echo "$nodt" | "$py" -c 'import json,sys; r=json.load(sys.stdin); print("GPU compute %.3f ms, latency %.3f ms (no transfers)" % (r["gpu_compute_ms"]["median"], r["host_latency_ms"]["median"]))' 2>/dev/null)"
  done
done

# ---- ftax-eager --device cuda: the same models op by op (a --bench run, then --profile) ----
for m in $models; do
  [ -e "$zoo/$m/model.onnx" ] || continue
  if [ -n "$eager_why" ]; then record system=ftax-eager model="$m" config=fp32 not_measured="$eager_why"; continue; fi
  if [ "$(left)" -lt 60 ]; then say "$m ftax-eager: out of time"; record system=ftax-eager model="$m" config=fp32 not_measured="out of time"; continue; fi
  dims="--dim batch=1"; [ $m = bert_base ] && dims="$dims --dim seq=128"
  set0="$zoo/$m/test_data_set_0"
  ins=""; n=0; while [ -e "$set0/input_$n.pb" ]; do ins="$ins $set0/input_$n.pb"; n=$((n + 1)); done
  d="$work/$m-eager-cuda"
  rm -rf "$d"; mkdir -p "$d"
  if ! timeout 120 "$eager" "$zoo/$m/model.onnx" --device cuda $dims $ins --output-dir "$d/out" >"$d/run.log" 2>&1; then
    say "$m ftax-eager --device cuda failed: $(tail -n 2 "$d/run.log" | tr '\n' ' ')"
    record system=ftax-eager model="$m" config=fp32 error="run failed: $(tail -n 1 "$d/run.log")"
    continue
  fi
  err=""; k=0
  while [ -e "$set0/output_$k.pb" ]; do
    err="$err$("$B/ftax-compare" "$set0/output_$k.pb" "$d/out/output_$k.pb" --atol 1e9 | sed 's/.*max abs err \([^,]*\),.*/\1/') "
    k=$((k + 1))
  done
  bench=$(timeout 180 "$eager" "$zoo/$m/model.onnx" --device cuda $dims $ins --bench --warmup $warmup --iters $iters --json 2>>"$d/run.log" | grep '^{' | tail -n 1)
  prof=$(timeout 180 "$eager" "$zoo/$m/model.onnx" --device cuda $dims $ins --bench --warmup $warmup --iters $((iters / 2)) --json --profile 2>>"$d/run.log" | grep '"profile"' | tail -n 1)
  [ -n "$bench" ] || bench='{}'
  [ -n "$prof" ] || prof='{}'
  record system=ftax-eager model="$m" config=fp32 max_abs_err="${err% }" bench:="$bench" profile:="$prof"
  say "$m ftax-eager --device cuda: max abs err ${err% }; $(printf '%s\n%s\n' "$bench" "$prof" | "$py" -c '
import json, sys
b, p = (json.loads(l) for l in sys.stdin)
p = p.get("profile", {})
print("latency %.3f ms; --profile: wall %.3f ms, GPU kernels %.3f ms, overhead %.3f ms" % (
    b["median_ms"], p["wall_ms"], p["kernel_ms"], p["wall_ms"] - p["kernel_ms"]))' 2>/dev/null)"
done

# ---- PyTorch peers ----
if "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  modes=eager,script,compile; [ $quick = 1 ] && modes=eager,script
  margs=""; for m in $models; do [ -e "$zoo/$m/model.onnx" ] && margs="$margs --model $m"; done
  if [ -n "$margs" ] && [ "$(left)" -gt 30 ]; then
    timeout "$(left)" "$py" bench/gpu/torch_peer.py --zoo "$zoo" $margs --modes $modes --precisions fp32,fp16 \
      --warmup $warmup --iters $iters --deadline "$((deadline - 60))" >>"$res/results.jsonl" 2>>"$log" || say "torch peers stopped (log.txt)"
    say "torch peers: $(grep -c '"system": "torch"' "$res/results.jsonl") runs"
  fi
else
  why=$("$py" -c 'import torch; print("torch %s (CUDA %s) sees no CUDA device" % (torch.__version__, torch.version.cuda))' 2>/dev/null || echo "no torch in $py")
  say "no PyTorch peers: $why"
  record system=torch not_measured="$why"
fi
finish
