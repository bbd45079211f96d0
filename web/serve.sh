#!/usr/bin/env bash
# Builds the trainsim site with Debian's emscripten and serves it locally.
usage() {
  cat <<'USAGE'
Usage: ./web/serve.sh [--port N] [--host ADDRESS] [PORT]

Builds the trainsim page (the core compiled to WebAssembly, in build/wasm/site)
and serves it; open the URL it prints.

  --port N, -p N     port to listen on (default: $PORT, else 8000; 0 picks a free port)
  --host ADDRESS     address to bind (default 127.0.0.1, this machine only;
                     0.0.0.0 serves every network interface)
  PORT               the port, as a plain first argument (same as --port)
  -h, --help         show this help

Environment: PORT (the default port), TRAINSIM_SITE_DIR=DIR (serve an
already built site without building), TRAINSIM_JOBS (build jobs, default 2).
On a fresh Debian/Ubuntu machine it first installs what is missing (apt).
USAGE
}

set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${PORT:-8000}"
host="127.0.0.1"
die() { echo "trainsim: $1 (see --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    -p|--port) [ $# -ge 2 ] || die "$1 needs a port number"; port="$2"; shift 2 ;;
    --port=*) port="${1#--port=}"; shift ;;
    --host) [ $# -ge 2 ] || die "--host needs an address"; host="$2"; shift 2 ;;
    --host=*) host="${1#--host=}"; shift ;;
    -*) die "unknown option $1" ;;
    *) port="$1"; shift ;;
  esac
done
case "$port" in
  ''|*[!0-9]*) die "the port must be a number from 0 to 65535, got \"$port\"" ;;
esac
[ "$port" -le 65535 ] || die "the port must be a number from 0 to 65535, got $port"
[ -n "$host" ] || die "--host needs an address"
site="${TRAINSIM_SITE_DIR:-}"

if [ -z "$site" ]; then
  "$root/tests/scripts/ensure_packages.sh" cmake g++ make emscripten esbuild node-acorn \
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

# A static server (bound to 127.0.0.1 unless --host says otherwise) that serves .mjs as JavaScript (module
# scripts need a JavaScript MIME type) and asks browsers to revalidate.
exec python3 -u - "$site" "$port" "$host" <<'PY'
import functools, http.server, socket, sys

site, port, host = sys.argv[1], int(sys.argv[2]), sys.argv[3]

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

class Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

try:
    server = Server((host, port), functools.partial(Handler, directory=site))
except OSError as error:
    sys.exit(f"trainsim: cannot listen on {host}:{port}: {error.strerror}")
shown = "localhost" if host in ("127.0.0.1", "localhost") else (f"[{host}]" if ":" in host else host)
print(f"trainsim: serving {site} at http://{shown}:{server.server_address[1]}/ (Ctrl-C stops)",
      flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
PY
