// The whole WASM boundary: Module.call(op, input) -> envelope text and
// Module.version(). Nothing but strings crosses; call_json never throws (the
// API's own catch-all turns a bug into an internal-error envelope).
#include <emscripten/bind.h>

#include <string>

#include "trainsim/trainsim.h"

namespace {

std::string call(const std::string& op, const std::string& input) {
  return trainsim::call_json(op, input);
}

std::string version() { return trainsim::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(trainsim) {
  emscripten::function("call", &call);
  emscripten::function("version", &version);
}
