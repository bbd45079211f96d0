#!/usr/bin/env bash
# Reliability tests (issue 7): the whole GoogleTest suite and the CLI checks
# built with AddressSanitizer + UndefinedBehaviorSanitizer, then a bounded
# libFuzzer run of every fuzz target in tests/fuzz. With Clang one build
# directory serves both (TRAINSIM_FUZZ implies TRAINSIM_SANITIZE); without
# Clang the sanitizer suite is built with GCC and fuzzing is skipped.
# Usage: run_reliability_tests.sh BUILD_DIR   (called by tests/run.sh)
# Environment:
#   TRAINSIM_FUZZ_SECONDS   seconds per fuzz target (default 60; 0 = replay the seeds only)
#   TRAINSIM_FUZZ_SEED      libFuzzer's random seed (default 1, so a CI run repeats the
#                           exploration of the last one; 0 = a new seed each run)
#   TRAINSIM_FUZZ_KEEP_CORPUS=1  keep (and grow) each target's corpus from earlier runs; by
#                           default a run starts from the seeds, so its time stays bounded
#   TRAINSIM_SANITIZE_CXX   compiler (default clang++ when present, else g++)
#   TRAINSIM_JOBS           parallel build/test jobs (default 2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(mkdir -p "${1:-$root/build}" && cd "${1:-$root/build}" && pwd)"
jobs="${TRAINSIM_JOBS:-2}"
seconds="${TRAINSIM_FUZZ_SECONDS:-60}"

"$root/tests/scripts/ensure_packages.sh" cmake make libgtest-dev libgmock-dev nlohmann-json3-dev \
  python3 clang libclang-rt-dev
cxx="${TRAINSIM_SANITIZE_CXX:-$(command -v clang++ || command -v g++)}"
fuzz=OFF
if "$cxx" --version | grep -qi clang; then fuzz=ON; fi
dir="$build/sanitize"

echo "== sanitizer build ($dir, $(basename "$cxx"), fuzz targets $fuzz)"
started=$SECONDS
cmake -S "$root" -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DTRAINSIM_SANITIZE=ON \
  -DTRAINSIM_FUZZ="$fuzz" -DTRAINSIM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$dir" -j "$jobs"
echo "sanitizer build: $((SECONDS - started)) s"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

echo "== sanitizer tests (ASan+UBSan)"
# The transfer test refits the sustained fraction for every held-out generation
# and source (tens of thousands of estimates of the published runs, 3-4 min
# natively): under the sanitizers it would take most of CI's time while running
# no code the rest of the suite does not. It runs in the native suite.
skipped='^TransferTest\.'
echo "not run under the sanitizers (run natively): $skipped"
started=$SECONDS
(cd "$dir" && ctest --output-on-failure -j "$jobs" -E "$skipped")
echo "sanitizer tests: $((SECONDS - started)) s"

[ "$fuzz" = ON ] || { echo "fuzzing skipped: $cxx is not Clang"; exit 0; }

echo "== fuzzing (${seconds} s per target; TRAINSIM_FUZZ_SECONDS changes it)"
seeds="$dir/fuzz-seeds"
rm -rf "$seeds"
python3 "$root/tests/fuzz/make_seeds.py" "$seeds" --cli "$dir/core/trainsim"
summary=()
failed=0
total_runs=0
for target in $(cat "$dir/tests/fuzz/targets.txt"); do
  corpus="$dir/fuzz-corpus/$target"
  artifacts="$dir/fuzz-artifacts/$target"
  [ "${TRAINSIM_FUZZ_KEEP_CORPUS:-0}" = 1 ] || rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts" "$seeds/$target"
  log="$dir/fuzz-$target.log"
  started=$SECONDS
  # The corpus, the fresh seeds and the committed regression inputs; 0 s runs each once.
  if [ "$seconds" -gt 0 ]; then
    limits=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -max_len=65536
      -seed="${TRAINSIM_FUZZ_SEED:-1}")
  else
    limits=(-runs=0)
  fi
  inputs=("$corpus" "$seeds/$target")
  [ -d "$root/tests/fuzz/regressions/$target" ] && inputs+=("$root/tests/fuzz/regressions/$target")
  dict="$seeds/$target.dict"
  [ -f "$dict" ] || dict="$seeds/trainsim.dict"
  if "$dir/tests/fuzz/$target" "${limits[@]}" -dict="$dict" \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "${inputs[@]}" >"$log" 2>&1; then
    status=passed
  else
    status="FAILED (see $log and $artifacts)"
    failed=$((failed + 1))
    tail -40 "$log"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  runs=${runs:-0}
  total_runs=$((total_runs + runs))
  summary+=("$target: $status, $runs executions in $((SECONDS - started)) s, corpus $(ls "$corpus" | wc -l) inputs")
done
echo "== reliability summary"
printf '  %s\n' "${summary[@]}"
echo "fuzz executions: $total_runs"
[ "$failed" -eq 0 ]
