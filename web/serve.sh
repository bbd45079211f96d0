#!/usr/bin/env bash
# Builds the trainsim site with Debian's emscripten and serves it locally:
#   ./web/serve.sh [PORT]          (PORT env or first argument, default 8000)
# On a fresh Debian/Ubuntu machine it first installs what is missing (apt).
# TRAINSIM_SITE_DIR=DIR serves an already built site without building
# (the tests do this); port 0 picks a free port. The URL is printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${1:-${PORT:-8000}}"
site="${TRAINSIM_SITE_DIR:-}"

if [ -z "$site" ]; then
  "$root/tests/scripts/ensure_packages.sh" cmake g++ make emscripten node-acorn \
    nlohmann-json3-dev python3
  build="$root/build/wasm"
  # Debian's emcc runs its JS optimizer with node, which needs acorn from here.
  export NODE_PATH=/usr/share/nodejs
  echo "trainsim: building the site in $build"
  emcmake cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "${TRAINSIM_JOBS:-2}" --target site
  site="$build/site"
fi
[ -f "$site/index.html" ] || { echo "trainsim: no site in $site" >&2; exit 1; }

# A static server bound to 127.0.0.1 that serves .mjs as JavaScript (module
# scripts need a JavaScript MIME type) and asks browsers to revalidate.
exec python3 -u - "$site" "$port" <<'PY'
import functools, http.server, sys

site, port = sys.argv[1], int(sys.argv[2])

class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript",
                      ".json": "application/json", ".wasm": "application/wasm"}

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, fmt, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                         functools.partial(Handler, directory=site))
print(f"trainsim: serving {site} at http://localhost:{server.server_address[1]}/ (Ctrl-C stops)",
      flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
PY
