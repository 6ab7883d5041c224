#!/bin/sh
# ftaxc --precision bf16 end to end: compile tests/models/<model> with it at one data set's shape,
# run it, and compare every output with the data set's fp32 reference at bf16's tolerance,
#   |actual - expected| <= 5e-3 + 2e-2 * |expected|
# (each product's inputs rounded to 8 significant bits, sums in fp32: the models used here stay
# within 1e-3 absolute). The outputs must also differ from the reference by more than fp32's
# rounding (1e-5 absolute), or bf16 was not used. Then the same with the portable kernel (the
# flags without AVX512_BF16), which must give what the native build gives; each program must
# name its kernel path in its --bench report.
#   run_bf16_test.sh BUILD_DIR MODEL_DIR DATA_SET_DIR WORK_DIR
# Paths without spaces (the tests/models data sets).
build=$1; model=$2; set=$3; work=$4
name=bf16_$(basename "$model")_$(basename "$set")
dir="$work/$name"
rm -rf "$dir"
mkdir -p "$dir" || exit 4
log="$dir/log"
fail() { cat "$log"; echo "$name: $*"; exit 1; }

flags=$("$build/ftax-testtool" shape-flags "$model/model.onnx" "$set" 2>"$log") || fail "cannot read the data set's shapes"
cflags=${FTAX_PROGRAM_CFLAGS:-"-O3 -march=native -pthread"}
native=portable
if grep -q 'avx512_bf16' /proc/cpuinfo 2>/dev/null; then
  case " $cflags " in *" -march=native "*) native=avx512_bf16 ;; esac
fi
ins=""
n=0
while [ -e "$set/input_$n.pb" ]; do ins="$ins $set/input_$n.pb"; n=$((n + 1)); done

# build_run PROG CFLAGS PATH: compile, run, check the outputs and the kernel path it reports
build_run() {
  # $flags and $ins: one word per flag or file (no spaces inside, see above)
  # shellcheck disable=SC2086
  "$build/ftaxc" "$model/model.onnx" -o "$dir/$1" $flags --precision bf16 --cflags "$2" >>"$log" 2>&1 ||
    fail "ftaxc --precision bf16 --cflags '$2' failed"
  grep -q "precision: bf16, [1-9][0-9]* calls on the bf16 GEMM core" "$dir/$1.c" || fail "$1.c does not record bf16"
  # shellcheck disable=SC2086
  "$dir/$1" $ins --output-dir "$dir/$1.out" >>"$log" 2>&1 || fail "the program $1 failed"
  # shellcheck disable=SC2086
  "$dir/$1" $ins --bench --warmup 0 --iters 1 >"$dir/$1.bench" 2>&1 || fail "$1 --bench failed"
  grep -q "precision: bf16 ($3)" "$dir/$1.bench" || fail "$1 does not report the $3 kernel: $(cat "$dir/$1.bench")"
  k=0
  while [ -e "$set/output_$k.pb" ]; do
    "$build/ftax-compare" "$set/output_$k.pb" "$dir/$1.out/output_$k.pb" --atol 5e-3 --rtol 2e-2 >>"$log" 2>&1 ||
      fail "$1: output $k is outside bf16's tolerance"
    k=$((k + 1))
  done
}

build_run native "$cflags" "$native"
rounded=0
k=0
while [ -e "$set/output_$k.pb" ]; do
  "$build/ftax-compare" "$set/output_$k.pb" "$dir/native.out/output_$k.pb" --atol 1e-5 --rtol 0 >/dev/null 2>&1 || rounded=1
  k=$((k + 1))
done
[ $rounded -eq 1 ] || fail "every output matches fp32 to 1e-5: the bf16 kernels did not run"

# the portable kernel, where the C compiler can turn AVX512_BF16 off
if [ "$native" = avx512_bf16 ]; then
  build_run portable "$cflags -mno-avx512bf16" portable
  k=0
  while [ -e "$set/output_$k.pb" ]; do
    "$build/ftax-compare" "$dir/native.out/output_$k.pb" "$dir/portable.out/output_$k.pb" --atol 1e-5 --rtol 1e-4 >>"$log" 2>&1 ||
      fail "output $k: the portable kernel differs from the AVX512_BF16 one"
    k=$((k + 1))
  done
fi
echo "$name: ok ($native$([ "$native" = avx512_bf16 ] && echo ' and portable'))"
