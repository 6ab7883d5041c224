#!/bin/sh
# Build ftax's host tools (ftaxc, ftax-compare, ftax-testtool) and ftax-eager for another x86-64
# Linux machine that lacks protobuf-c, e.g. the GPU machine bench/gpu_run.sh runs on: portable
# code (-march=x86-64-v2), with the shared libraries they need copied beside them. Run it here,
# then hand the folder to the GPU machine with the working tree (it is ignored by git, as
# build*/ is):
#
#   bench/gpu_prep.sh               # writes build-gpu-tools/
#   (GPU machine) bench/gpu_run.sh  # uses build-gpu-tools/ when it cannot build ftax itself
#
# ftax-eager gets CUDA (--device cuda) when CMake finds nvcc here. What it links from CUDA
# (libcudart, libcublasLt, libcudnn) is not copied: those come from the GPU machine's CUDA, which
# must have the same major versions (BUILD_INFO says which were linked here). Every other
# library outside the C runtime (libprotobuf-c, libgomp, libstdc++...) is copied into
# build-gpu-tools/lib/; gpu_run.sh puts on the library path only those the GPU machine lacks
# (its own libstdc++ or libgomp may be newer than these, and torch needs the newer ones).
set -e
cd "$(dirname "$0")/.."
out=build-gpu-tools
tmp=build-gpu-host
cmake -S . -B "$tmp" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="-O2 -march=x86-64-v2" >/dev/null
cmake --build "$tmp" -j2 --target ftaxc ftax-compare ftax-testtool >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
eager=1
cmake --build "$tmp" -j2 --target ftax-eager >>"$tmp/build.log" 2>&1 || { eager=0; tail -n 20 "$tmp/build.log"; echo "gpu_prep.sh: warning: ftax-eager did not build (above; $tmp/build.log)"; }
rm -rf "$out"
mkdir -p "$out/lib"
cp "$tmp/ftaxc" "$tmp/ftax-compare" "$tmp/ftax-testtool" "$out/"
[ $eager = 1 ] && cp "$tmp/ftax-eager" "$out/"

# the libraries to copy: what ldd resolves, less the C runtime (every Linux has its own) and
# CUDA's (they must match the GPU machine's driver)
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnvrtc|libnvJitLink|libnvidia-[a-z-]*)\.so'
for b in "$out"/*; do
  ldd "$b" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if printf '%s\n' "$name" | grep -Eq "$skip"; then continue; fi
  [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
done

{
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n) from $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  nvcc --version 2>/dev/null | tail -n 1 | sed 's/^/nvcc: /' || true
  if [ $eager = 1 ]; then
    cu=$(ldd "$out/ftax-eager" | awk '{print $1}' | grep -E '^lib(cuda|cudart|cublas|cublasLt|cudnn|nvrtc|nvJitLink)' | tr '\n' ' ')
    echo "ftax-eager links from CUDA (the GPU machine must have these): ${cu:-nothing}"
    # what ftax-eager says to --device cuda here: "no CUDA device" means it was built with CUDA
    set -- $(LD_LIBRARY_PATH="$out/lib" "$out/ftax-testtool" shape-flags tests/models/cnn_small/model.onnx tests/models/cnn_small/test_data_set_0)
    msg=$(LD_LIBRARY_PATH="$out/lib" "$out/ftax-eager" tests/models/cnn_small/model.onnx --device cuda "$@" \
          tests/models/cnn_small/test_data_set_0/input_0.pb --output-dir "$tmp/eager-check" 2>&1 | tail -n 1) || true
    echo "ftax-eager --device cuda here: ${msg:-ran}"
  else
    echo "ftax-eager: did not build"
  fi
} >"$out/BUILD_INFO"
echo "$out: $(ls "$out" | tr '\n' ' ')"
echo "$out/lib: $(ls "$out/lib" | tr '\n' ' ')"
sed 's/^/  /' "$out/BUILD_INFO"
# a library the tools need that is neither copied nor on every machine would show here
for b in "$out"/ftax*; do
  LD_LIBRARY_PATH="$out/lib" ldd "$b" | grep 'not found' | sed "s|^|  $(basename "$b"): |" || true
done
