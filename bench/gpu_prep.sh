#!/bin/sh
# Build ftax's host tools (ftaxc, ftax-compare, ftax-testtool) for another x86-64 Linux machine
# that lacks protobuf-c, e.g. the GPU machine bench/gpu_run.sh runs on: portable code
# (-march=x86-64-v2), with libprotobuf-c.so.1 copied beside them. Run it here, then hand the
# folder to the GPU machine with the working tree (it is ignored by git, as build*/ is):
#
#   bench/gpu_prep.sh               # writes build-gpu-tools/
#   (GPU machine) bench/gpu_run.sh  # uses build-gpu-tools/ when it cannot build ftax itself
set -e
cd "$(dirname "$0")/.."
out=build-gpu-tools
tmp=build-gpu-host
cmake -S . -B "$tmp" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="-O2 -march=x86-64-v2" >/dev/null
cmake --build "$tmp" -j2 --target ftaxc ftax-compare ftax-testtool >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
cp "$tmp/ftaxc" "$tmp/ftax-compare" "$tmp/ftax-testtool" "$out/"
lib=$(ldd "$out/ftaxc" | awk '/libprotobuf-c/ {print $3}')
[ -n "$lib" ] && cp -L "$lib" "$out/"
echo "$out: $(ls "$out" | tr '\n' ' ')"
