#!/bin/sh
# Stack spills in a compiled program's hot loops (tests/isa/spill_check.py):
#   spill_test.sh BUILD_DIR MODEL_DIR WORK_DIR ISA CC CFLAGS MAX [ftaxc flags...]
# compiles MODEL_DIR/model.onnx with ftaxc --emit-only --isa ISA, the program with CC CFLAGS -c,
# and fails when the innermost loops with 8 or more vector FMAs of its hot kernels (the GEMM
# tiles, small-M tiles, conv and depthwise tiles, attention, Winograd: the functions named
# below) make more than MAX stack loads and stores per vector FMA.
build=$1; model=$2; work=$3; isa=$4; cc=$5; cflags=$6; max=$7; shift 7
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work" || exit 4
out="$work/$(basename "$model")_$isa"
"$build/ftaxc" "$model/model.onnx" -o "$out" --isa "$isa" --emit-only "$@" >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
# shellcheck disable=SC2086
$cc $cflags -Wno-psabi -c "$out.c" -o "$out.o" 2>>"$out.log" || { cat "$out.log"; exit 1; }
objdump=objdump
case "$cc" in *aarch64*) objdump=aarch64-linux-gnu-objdump ;; esac
python3 "$src/tests/isa/spill_check.py" "$out.o" --objdump "$objdump" --max "$max" \
  --functions '^(ft_uk_|ft_gemm_ukernel|ft_gemm_small_tile|ft_pwt_tile|ft_conv_dw|ft_dw|ft_attention|ft_wino)'
