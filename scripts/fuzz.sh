#!/bin/sh
# Run each libFuzzer target (tests/fuzz) for SECONDS, one job each, with ASan + UBSan.
#   scripts/fuzz.sh [SECONDS] [TARGET...]       (default 60 s; targets: fuzz_model fuzz_tensor fuzz_extpath)
# Builds build-fuzz/ with clang (-DFTAX_FUZZ=ON) when needed; corpora live in
# build-fuzz/corpus/<target>/ (kept between runs, not committed), seeded from tests/fuzz/seeds.sh.
# Prints per target: executions, exec/s, corpus size. Exits 1 on a crash, naming the reproducer
# (build-fuzz/crashes/<target>/); replay one with build-fuzz/fuzz/<target> FILE. A crash that is
# fixed goes to tests/fuzz/regressions/<target>/ (replayed by the CTest test fuzz_regressions).
set -u
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-fuzz_model fuzz_tensor fuzz_extpath}
b=build-fuzz
if ! command -v clang >/dev/null; then echo "fuzz.sh: clang is missing (scripts/install-deps.sh installs it)" >&2; exit 1; fi
mkdir -p $b
CC=clang cmake -S . -B $b -DFTAX_FUZZ=ON -DCMAKE_BUILD_TYPE=Release >$b/configure.log 2>&1 ||
  { cat $b/configure.log; exit 1; }
cmake --build $b -j"${FTAX_FUZZ_BUILD_JOBS:-2}" >$b/build.log 2>&1 || { tail -n 40 $b/build.log; exit 1; }
sh tests/fuzz/seeds.sh $b/ftax-fuzz-seedtool $b/seeds 65536 >/dev/null || exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
for t in $targets; do
  case $t in
    fuzz_model) max=65536 ;;
    fuzz_tensor) max=16384 ;;
    fuzz_extpath) max=256 ;;
    *) echo "fuzz.sh: unknown target '$t'" >&2; exit 1 ;;
  esac
  mkdir -p $b/corpus/$t $b/crashes/$t
  log=$b/fuzz-$t.log
  # the extra corpus folder is read, never written: new inputs go to corpus/<target>
  $b/fuzz/$t -rss_limit_mb=2048 -timeout=10 -max_len=$max -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix=$b/crashes/$t/ $b/corpus/$t $b/seeds/$t >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  corpus=$(find $b/corpus/$t -type f | wc -l)
  printf '%-13s %10s execs %7s exec/s %6s corpus files' "$t" "${runs:-?}" "${rate:-?}" "$corpus"
  if [ $rc -ne 0 ]; then
    failed=1
    repro=$(sed -n "s/.*Test unit written to \(.*\)/\1/p" "$log" | tail -n 1)
    echo "  CRASH (exit $rc)"
    grep -E "ERROR: |runtime error|SUMMARY|^    #[0-9]+ .* in ft_" "$log" | head -n 12 | sed 's/^/    /'
    echo "    reproducer: ${repro:-none written (see $log)}"
    echo "    replay: $b/fuzz/$t ${repro:-FILE}"
  else
    echo "  ok"
  fi
done
exit $failed
