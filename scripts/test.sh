#!/bin/sh
# Configure, build and run every test (unit, conformance, end-to-end); see tests/README.md.
#   ./scripts/test.sh                 everything
#   ./scripts/test.sh -L unit         only the Criterion unit tests (any ctest arguments work)
#   ./scripts/test.sh -LE conformance everything but the ONNX node tests
# BUILD_DIR (default build) and JOBS (default 2) come from the environment.
set -e
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=${JOBS:-2}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@"
