#!/bin/sh
# Build ftax and run the whole test suite (unit, end-to-end, ONNX conformance, fuzz regressions),
# then the hostile-input jobs (tests/README.md, "Fuzzing and sanitizers"):
#   build-asan/  everything with ASan + UBSan (generated programs too): unit, e2e, a 40-test
#                conformance sample, the fuzz seeds and regressions, the malformed models
#   build-fuzz/  the libFuzzer targets, each run for $FTAX_FUZZ_SECONDS (default 30) s
# FTAX_TEST_QUICK=1 stops after the normal suite.
set -e
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFTAX_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
if [ "${FTAX_TEST_QUICK:-0}" = 1 ]; then
  ctest --test-dir build --output-on-failure -j"$jobs"
  exit 0
fi
# the malformed models run once, in the sanitizer build below, where a memory error counts too
ctest --test-dir build --output-on-failure -j"$jobs" -LE malformed

t0=$(date +%s)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DFTAX_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >build-asan/build.log 2>&1 || { tail -n 40 build-asan/build.log; exit 1; }
t1=$(date +%s)
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'unit|e2e|conformance|fuzz|malformed' \
    ${FTAX_ASAN_EXCLUDE:+-E "$FTAX_ASAN_EXCLUDE"}
t2=$(date +%s)
scripts/fuzz.sh "${FTAX_FUZZ_SECONDS:-30}"
t3=$(date +%s)
echo "sanitizer build $((t1 - t0)) s, sanitizer tests $((t2 - t1)) s, fuzzing (build and runs) $((t3 - t2)) s"
