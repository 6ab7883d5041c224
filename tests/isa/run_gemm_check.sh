#!/bin/sh
# The fp32 GEMM core on every ISA this machine can build and run (tests/isa/gemm_check.c):
#   run_gemm_check.sh SOURCE_DIR WORK_DIR [CROSS_CC QEMU]
# builds the check natively (-march=native), for x86-64-v3 (AVX2 + FMA) and the x86-64 baseline
# (SSE2) on an x86-64 machine, and with CROSS_CC for AArch64 (NEON) run under QEMU; each must pass
# against its double reference, and the builds with FMA (native, x86-64-v3, AArch64) must give
# the same bits (the same hash). A build the machine cannot run (x86-64-v3 without AVX2) is
# left out and said so.
src=$1; work=$2; xcc=${3:-}; qemu=${4:-}
mkdir -p "$work" || exit 4
inc="-I$src/templates/c -I$src/templates/common"
fail=0; hashes=""
run() { # NAME RUNNER CC FLAGS...
  name=$1; runner=$2; cc=$3; shift 3
  $cc -O2 "$@" -Wall -Wno-psabi $inc "$src/tests/isa/gemm_check.c" -o "$work/gemm_check_$name" -lm -lpthread \
    >"$work/$name.build.log" 2>&1 || { echo "$name: build failed"; cat "$work/$name.build.log"; fail=1; return; }
  $runner "$work/gemm_check_$name" >"$work/$name.log" 2>&1
  rc=$?
  isa=$(sed -n 's/^isa //p' "$work/$name.log")
  echo "$name ($isa): $(tail -n 1 "$work/$name.log")"
  if [ $rc -ne 0 ]; then grep FAIL "$work/$name.log" | head -n 5; fail=1; return; fi
  h=$(sed -n 's/^hash //p' "$work/$name.log")
  case "$name" in baseline) ;; *) hashes="$hashes $name:$h" ;; esac
}
arch=$(uname -m)
run native "" cc -march=native
if [ "$arch" = x86_64 ]; then
  if grep -q ' avx2 ' /proc/cpuinfo && grep -q ' fma ' /proc/cpuinfo; then run x86-64-v3 "" cc -march=x86-64-v3
  else echo "x86-64-v3: this CPU has no AVX2 + FMA, not run"; fi
  run baseline "" cc -march=x86-64
fi
if [ -n "$xcc" ]; then run aarch64 "$qemu" "$xcc"; fi
first=""
for e in $hashes; do
  h=${e#*:}
  [ -z "$first" ] && first=$h
  [ "$h" = "$first" ] || { echo "different bits: $hashes"; fail=1; break; }
done
[ $fail = 0 ] && echo "same bits on:$hashes"
exit $fail
