#!/usr/bin/env bash
# THE test command: installs what is missing, configures, builds and runs
# every test (native GoogleTest suite, CLI checks), then prints ctest's summary.
# Environment: TRAINSIM_BUILD_DIR (default: build/ at the repository root).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TRAINSIM_BUILD_DIR:-$root/build}"
jobs="${TRAINSIM_JOBS:-2}"

"$root/tests/scripts/ensure_packages.sh" cmake g++ make libgtest-dev libgmock-dev \
  libbenchmark-dev nlohmann-json3-dev

echo "== native build ($build/native)"
cmake -S "$root" -B "$build/native" -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_WERROR=ON >/dev/null
cmake --build "$build/native" -j "$jobs"

echo "== native tests"
(cd "$build/native" && ctest --output-on-failure -j "$jobs")

# ASan+UBSan build of the test suite, then bounded fuzzing (TRAINSIM_FUZZ_SECONDS per target).
if [ "${TRAINSIM_SKIP_RELIABILITY:-0}" != "1" ]; then
  echo "== reliability tests"
  "$root/tests/scripts/run_reliability_tests.sh" "$build"
fi

# WebAssembly build, node smoke test and headless-Chromium page tests.
if [ "${TRAINSIM_SKIP_WEB:-0}" != "1" ] && [ -x "$root/tests/scripts/run_web_tests.sh" ]; then
  echo "== web tests"
  "$root/tests/scripts/run_web_tests.sh" "$build"
fi
