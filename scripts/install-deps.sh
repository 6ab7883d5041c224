#!/bin/sh
# Install what ftax needs on a fresh Debian machine (bookworm or later).
#   scripts/install-deps.sh           build + tests: C toolchain, CMake, protobuf-c, libonnx-dev
#                                     (onnx.proto), Criterion, ONNX backend node tests,
#                                     python3-onnx (the malformed-model test), python3-numpy and
#                                     python3-pytest (the Python package's test), clang with
#                                     libFuzzer (scripts/fuzz.sh), oneDNN (the kernel table
#                                     benchmark, bench/kernels/kernel_table.c), the aarch64 and
#                                     riscv64 cross compilers with their C libraries and qemu-user
#                                     (the cross tests: ctest -L cross), Arm's bare-metal GCC with
#                                     newlib and qemu-system-arm (the baremetal tests, tests/baremetal)
#   scripts/install-deps.sh --build   only what building ftaxc, ftax-eager and ftax-compare needs (the
#                                     demo): C toolchain, CMake, pkg-config, protobuf-c, libonnx-dev
#   scripts/install-deps.sh --bench   also the model zoo and peers: python3-torch, torchvision,
#                                     OpenBLAS (torch is slow on the reference BLAS),
#                                     gnuplot, Node.js + onnxruntime-node (npm)
set -e
want_bench=0
[ "${1:-}" = "--bench" ] && want_bench=1
want_tests=1
[ "${1:-}" = "--build" ] && want_tests=0
pkgs="build-essential cmake pkg-config libprotobuf-c-dev protobuf-c-compiler libonnx-dev"
if [ $want_tests = 1 ]; then
  pkgs="$pkgs libcriterion-dev libonnx-testdata python3 python3-onnx python3-numpy python3-pytest clang libclang-rt-14-dev libdnnl-dev
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user
    gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
fi
[ $want_bench = 1 ] && pkgs="$pkgs python3-torch python3-torchvision python3-numpy libopenblas0-pthread gnuplot-nox"
# Node.js from Debian only where no node/npm is on the PATH (a node installed another way
# conflicts with Debian's npm package)
[ $want_bench = 1 ] && ! { command -v node && command -v npm; } >/dev/null 2>&1 && pkgs="$pkgs nodejs npm"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ $want_bench = 1 ] && [ ! -d "$(dirname "$0")/../bench/peers/node_modules/onnxruntime-node" ]; then
  (cd "$(dirname "$0")/../bench/peers" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi
