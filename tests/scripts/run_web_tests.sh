#!/usr/bin/env bash
# The web tests: builds the WASM site, checks its payload size, runs the node
# smoke test of the module (against the native CLI), then serves the site on
# a free 127.0.0.1 port and runs the headless-Chromium page tests.
# Usage: run_web_tests.sh BUILD_DIR   (called by tests/run.sh after the native build)
# Environment: TRAINSIM_CHROMIUM (default /usr/bin/chromium), TRAINSIM_JOBS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(mkdir -p "${1:-$root/build}" && cd "${1:-$root/build}" && pwd)"
jobs="${TRAINSIM_JOBS:-2}"
max_payload_bytes=$((400 * 1024))

packages=(cmake make emscripten esbuild node-acorn nlohmann-json3-dev python3)
chromium="${TRAINSIM_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || packages+=(chromium)
# Node.js may come from elsewhere than Debian (then npm comes with it).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
"$root/tests/scripts/ensure_packages.sh" "${packages[@]}"

results=()
failed=0
record() {  # record NAME STATUS
  results+=("$1: $2")
  [ "$2" = passed ] || failed=$((failed + 1))
}

echo "== wasm build ($build/wasm)"
export NODE_PATH=/usr/share/nodejs  # Debian's emcc needs acorn from here
emcmake cmake -S "$root" -B "$build/wasm" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/wasm" -j "$jobs"
site="$build/wasm/site"

echo "== payload size (gzip -9)"
# What the page loads: its own modules plus trainsim_web.mjs/.wasm (the
# single-file trainsim_wasm.mjs in the site is for node and embedders).
payload=0
while IFS= read -r file; do
  size=$(gzip -9c "$file" | wc -c)
  payload=$((payload + size))
done < <(find "$site" -name '*.js' -o -name 'trainsim_web.mjs' -o -name 'trainsim_web.wasm' | sort)
module=$(cat "$site/trainsim_web.mjs" "$site/trainsim_web.wasm" | gzip -9c | wc -c)
echo "WASM+JS payload: $payload bytes gzipped ($((payload / 1024)) KiB; engine $((module / 1024)) KiB), limit $((max_payload_bytes / 1024)) KiB"
if [ "$payload" -le "$max_payload_bytes" ]; then record "payload size" passed; else record "payload size" failed; fi

echo "== native CLI"
cli="$build/native/core/trainsim"
if [ ! -d "$build/native" ]; then
  cmake -S "$root" -B "$build/native" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build/native" -j "$jobs" --target trainsim >/dev/null

echo "== node smoke test of the WASM module"
work="$build/web-tests"
mkdir -p "$work"
"$cli" estimate "$root/tests/wasm/smoke_config.json" >"$work/smoke_cli.json" || true
if node "$root/tests/wasm/smoke.mjs" "$site/trainsim_wasm.mjs" "$root/tests/wasm/smoke_config.json" \
    "$work/smoke_cli.json"; then
  record "wasm smoke test" passed
else
  record "wasm smoke test" failed
fi
if node "$root/tests/wasm/interop_smoke.mjs" "$site/trainsim_wasm.mjs" "$root"; then
  record "wasm import/export smoke test" passed
else
  record "wasm import/export smoke test" failed
fi
if node "$root/tests/wasm/determinism.mjs" "$site/trainsim_wasm.mjs" "$cli"; then
  record "native vs wasm determinism" passed
else
  record "native vs wasm determinism" failed
fi

echo "== browser tests"
(cd "$root/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
port_file="$work/serve.log"
TRAINSIM_SITE_DIR="$site" "$root/web/serve.sh" --port 0 >"$port_file" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://localhost:[0-9]*/' "$port_file" | head -1 || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$port_file" >&2
  record "browser tests" "failed (the server did not start)"
else
  url="${url/localhost/127.0.0.1}"
  echo "serving $site at $url"
  artifacts="$build/browser-artifacts"
  rm -rf "$artifacts"
  if (cd "$root/tests/browser" && TRAINSIM_CHROMIUM="$chromium" node run.mjs --url "$url" --cli "$cli" \
      --module "$site/trainsim_wasm.mjs" --artifacts "$artifacts" --site "$site"); then
    record "browser tests" passed
  else
    record "browser tests" failed
  fi
  echo "screenshots: $artifacts"
fi
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
trap - EXIT

echo "== web test summary"
printf '  %s\n' "${results[@]}"
echo "web: $(( ${#results[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
