#!/bin/sh
# The ONNX backend node tests through ftaxc and the generated programs.
#
#   conformance.sh --build BUILD_DIR [--tests DIR] [--work DIR] [--report FILE] [--floor FILE]
#                  [--jobs N] [--timeout S] [--filter GLOB] [--sample N] [--update-floor]
# (--jobs defaults to $FTAX_CONFORMANCE_JOBS, else 2)
#
# Runs tests/conformance/run_node_test.sh on every DIR/test_*/ (N at a time), writes the coverage
# table FILE (default BUILD_DIR/conformance.md: counts, per-op summary, every test's result), and
# exits 1 when fewer tests pass than the floor in tests/conformance/floor.txt. The committed table,
# docs/conformance.md, changes only with the floor: a test run never writes into the source tree.
#
# --update-floor  raise the floor to today's pass count (never lowers it: a lower floor is a
#                 decision to write into floor.txt by hand, with the reason in the commit), and
#                 copy the table to docs/conformance.md, to commit with floor.txt
# --filter GLOB   run only the tests matching GLOB (e.g. 'test_reduce_*'); no table, no floor
# --sample N      run N tests spread evenly over the sorted list (every op family gets some); no
#                 table, no floor: fails when a sampled test that docs/conformance.md lists as
#                 passing does not pass (the sanitizer build runs this)
#
# A test "passes" when ftaxc compiles it, the program runs, and every output matches (rtol 1e-3,
# atol 1e-5, integers exact); "unsupported" when ftaxc exits 3 (an op or a type ftax does not
# support, named in the table); anything else "fails". CTest runs this as the test `conformance`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

if [ "${1:-}" = "--one" ]; then
  # one test (called through xargs): BUILD WORK TESTS_ROOT TIMEOUT TEST_DIR -> WORK/results/NAME
  build=$2; work=$3; root=$4; limit=$5; t=${6%/}
  name=$(basename "$t")
  msg=$(timeout "$limit" sh "$here/run_node_test.sh" "$build" "$t" "$work/tmp" 2>&1)
  rc=$?
  msg=$(printf '%s\n' "$msg" | tail -n 1)
  case $rc in
    0) status=pass ;;
    3) status=unsupported ;;
    124) status=fail; msg="timed out after ${limit} s" ;;
    *) status=fail ;;
  esac
  # shorter details: no test-name prefix, no absolute paths, no repeated "ftaxc: error:"
  msg=${msg#"$name: "}
  msg=$(printf '%s' "$msg" | sed -e "s|$root/||g" -e "s|$work/tmp/||g" -e 's|ftaxc: error: ||' -e 's|	| |g')
  [ $status = unsupported ] && msg=${msg#"ftaxc exit 3: "}
  msg=${msg#"$name/model.onnx: "}
  ops=$("$build/ftax-testtool" ops "$t/model.onnx" 2>/dev/null | tr '\n' ' ')
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "${ops% }" "$msg" >"$work/results/$name"
  exit 0
fi

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }
build=""; tests=/usr/share/libonnx-testdata/data/node; work=""; report=""; committed=$src/docs/conformance.md
floor_file=$here/floor.txt; jobs=${FTAX_CONFORMANCE_JOBS:-2}; limit=120; filter=""; update=0; sample=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift ;;
    --tests) tests=$2; shift ;;
    --work) work=$2; shift ;;
    --report) report=$2; shift ;;
    --floor) floor_file=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --timeout) limit=$2; shift ;;
    --filter) filter=$2; shift ;;
    --sample) sample=$2; shift ;;
    --update-floor) update=1 ;;
    -h|--help) usage ;;
    *) echo "conformance.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[ -n "$build" ] || usage
build=$(cd "$build" && pwd) || exit 1
tests=$(cd "$tests" && pwd) || exit 1
work=${work:-$build/conformance}
report=${report:-$build/conformance.md}
for tool in ftaxc ftax-compare ftax-testtool; do
  [ -x "$build/$tool" ] || { echo "conformance.sh: $build/$tool is missing; build first" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work/results" "$work/tmp" || exit 1

start=$(date +%s)
find "$tests" -mindepth 1 -maxdepth 1 -type d -name "${filter:-test_*}" | LC_ALL=C sort >"$work/list"
if [ "$sample" -gt 0 ]; then
  # every k-th test, k = total / N, starting in the middle of the first stride
  n=$(wc -l <"$work/list")
  step=$((n / sample)); [ $step -ge 1 ] || step=1
  awk -v s=$step 'NR % s == int(s / 2) % s' "$work/list" | head -n "$sample" >"$work/list.sample"
  mv "$work/list.sample" "$work/list"
fi
xargs -P "$jobs" -n 1 sh "$0" --one "$build" "$work" "$tests" "$limit" <"$work/list"
elapsed=$(($(date +%s) - start))

all=$work/results.tsv
cat "$work"/results/* 2>/dev/null | LC_ALL=C sort >"$all"
total=$(wc -l <"$all")
pass=$(awk -F'\t' '$2 == "pass"' "$all" | wc -l)
unsup=$(awk -F'\t' '$2 == "unsupported"' "$all" | wc -l)
fail=$(awk -F'\t' '$2 == "fail"' "$all" | wc -l)
floor=$(grep -v '^#' "$floor_file" 2>/dev/null | tr -dc '0-9\n' | grep . | head -n 1)
floor=${floor:-0}

if [ $fail -gt 0 ]; then
  echo "failures:"
  awk -F'\t' '$2 == "fail" { print "  " $1 ": " $4 }' "$all"
fi
echo "conformance: $pass pass, $unsup unsupported, $fail fail of $total node tests in ${elapsed} s (floor $floor)"
if [ "$sample" -gt 0 ]; then
  # a sampled test that the committed table lists as passing must pass here too
  worse=$(awk -F'\t' 'NR == FNR { if ($2 != "pass") bad[$1] = $2 ": " $4; next }
                      /^\| test_/ { split($0, f, " *\\| *"); if (f[4] == "pass" && (f[2] in bad)) print "  " f[2] " " bad[f[2]] }' \
           "$all" "$committed")
  if [ -n "$worse" ]; then
    echo "FAIL: sampled tests that pass in $committed do not pass here:"
    printf '%s\n' "$worse"
    exit 1
  fi
  exit 0
fi
if [ -n "$filter" ]; then exit 0; fi

if [ $update -eq 1 ]; then
  if [ "$pass" -gt "$floor" ]; then
    {
      grep '^#' "$floor_file" 2>/dev/null
      echo "$pass"
    } >"$floor_file.tmp" && mv "$floor_file.tmp" "$floor_file"
    echo "floor raised from $floor to $pass in $floor_file"
    floor=$pass
  else
    echo "floor stays at $floor ($pass pass)"
  fi
fi

# ---- the coverage table -------------------------------------------------------------------
version=$(dpkg-query -W -f '${Version}' libonnx-testdata 2>/dev/null || echo unknown)
mkdir -p "$(dirname "$report")"
{
  echo "# ONNX conformance"
  echo
  echo "Generated by \`tests/conformance/conformance.sh\` (run by \`ctest -R conformance\`); do not edit by hand."
  echo "The ONNX backend node tests (Debian \`libonnx-testdata\` $version) compiled with \`ftaxc\` at"
  echo "\`-Og\`, run, and compared with \`ftax-compare\` (rtol 1e-3, atol 1e-5, integers exact)."
  echo
  echo "| result | tests |"
  echo "|---|---:|"
  echo "| pass | $pass |"
  echo "| unsupported (ftaxc exit 3) | $unsup |"
  echo "| fail | $fail |"
  echo "| total | $total |"
  echo
  echo "The floor (\`tests/conformance/floor.txt\`) is $floor: the test fails when fewer pass."
  echo
  echo "## Per op"
  echo
  echo "A test counts for every op type its model uses (expanded function tests use several)."
  echo
  echo "| op | tests | pass | unsupported | fail |"
  echo "|---|---:|---:|---:|---:|"
  awk -F'\t' '{
      n = split($3, ops, " ")
      for (i = 1; i <= n; i++) { t[ops[i]]++; c[ops[i] "\t" $2]++ }
    }
    END { for (o in t) printf "| %s | %d | %d | %d | %d |\n", o, t[o], c[o "\tpass"], c[o "\tunsupported"], c[o "\tfail"] }' "$all" |
    LC_ALL=C sort
  echo
  echo "## Missing ops"
  echo
  echo "Op types ftaxc reported unsupported, by the number of tests each one blocks."
  echo
  echo "| op | tests blocked |"
  echo "|---|---:|"
  awk -F'\t' '$2 == "unsupported" && index($4, "does not support: ") {
      n = split(substr($4, index($4, "does not support: ") + 18), ops, ", ")
      for (i = 1; i <= n; i++) { sub(/ x[0-9]+$/, "", ops[i]); b[ops[i]]++ }
    }
    END { for (o in b) printf "%d\t%s\n", b[o], o }' "$all" |
    LC_ALL=C sort -k1,1nr -k2,2 | awk -F'\t' '{ printf "| %s | %d |\n", $2, $1 }'
  echo
  echo "## Tests"
  echo
  echo "| test | ops | result | detail |"
  echo "|---|---|---|---|"
  awk -F'\t' '{
      d = $4
      if ($2 == "pass") d = ""
      if (length(d) > 160) d = substr(d, 1, 157) "..."
      gsub(/\|/, "\\|", d)
      printf "| %s | %s | %s | %s |\n", $1, $3, $2, d
    }' "$all"
} >"$report.tmp" && mv "$report.tmp" "$report"
echo "wrote $report"
if [ $update -eq 1 ] && [ "$report" != "$committed" ]; then
  cp "$report" "$committed" && echo "copied it to $committed (commit it with $floor_file)"
fi

if [ "$pass" -lt "$floor" ]; then
  echo "FAIL: $pass node tests pass, below the floor of $floor ($floor_file)"
  exit 1
fi
if [ "$pass" -gt "$floor" ]; then
  echo "note: $pass pass, above the floor of $floor; raise it with: sh tests/conformance/conformance.sh --build $build --update-floor"
fi
exit 0
