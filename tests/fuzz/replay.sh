#!/bin/sh
# CTest fuzz_regressions: every seed and every committed crash input through each fuzz target's
# LLVMFuzzerTestOneInput, without libFuzzer (tests/fuzz/replay.c).
#   replay.sh BUILD_DIR WORK_DIR
# The seeds are gathered afresh (seeds.sh, no size limit: the big models are replayed whole).
set -eu
build=$1; work=$2
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/seeds.sh" "$build/ftax-fuzz-seedtool" "$work"
for t in fuzz_model fuzz_tensor fuzz_extpath; do
  "$build/fuzz/$t" "$work/$t" 2>"$work/$t.log" || {
    tail -n 40 "$work/$t.log"
    echo "fuzz_regressions: $t failed on the input named last above (log: $work/$t.log)"
    exit 1
  }
done
