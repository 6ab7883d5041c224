#!/bin/sh
# Every committed model on the embedded targets, beyond CI's subset (docs/embedded.md):
# data set 0 cross-compiled for riscv64 (and aarch64 with --aarch64) and run under qemu-user,
# compared as in e2e; and its freestanding object for a Cortex-M7 checked against
# tests/baremetal/allowed_symbols.txt. Needs a built build/ (cmake --build build) and the
# packages of scripts/install-deps.sh. Prints one line per check; exits 1 if any failed.
#   scripts/embedded_check.sh [--aarch64] [--work DIR]
set -u
cd "$(dirname "$0")/.." || exit 1
arches=riscv64; work=/tmp/ftax_embedded_check
while [ $# -gt 0 ]; do
  case $1 in
    --aarch64) arches="aarch64 riscv64"; shift ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "embedded_check.sh: unknown argument $1" >&2; exit 1 ;;
  esac
done
mkdir -p "$work"
fail=0
for d in tests/models/*/; do
  m=$(basename "$d")
  if [ ! -f "$d/model.onnx" ] || [ ! -d "$d/test_data_set_0" ]; then continue; fi
  for a in $arches; do
    FTAX_TEST_CC=$a-linux-gnu-gcc FTAX_TEST_RUNNER="qemu-$a -L /usr/$a-linux-gnu" \
      sh tests/e2e/run_model_test.sh build "$d" "${d}test_data_set_0" "$work/$a" >"$work/$a-$m.log" 2>&1
    rc=$?; [ $rc = 0 ] || fail=1
    echo "$a $m: $([ $rc = 0 ] && echo ok || echo "FAILED ($work/$a-$m.log)")"
  done
  python3 tests/baremetal/run_baremetal.py --build build --model "$d" --work "$work/bm/$m" >"$work/bm-$m.log" 2>&1
  rc=$?; [ $rc = 0 ] || fail=1
  echo "freestanding symbols $m: $([ $rc = 0 ] && echo ok || echo "FAILED ($work/bm-$m.log)")"
done
exit $fail
