// The whole WASM boundary: Module.call(op, input) -> envelope text and
// Module.version(). Nothing but strings crosses; call_json never throws (the
// API's own catch-all turns a bug into an internal-error envelope).
// TRAINSIM_WASM_OPS picks the ops a module answers (wasm/CMakeLists.txt):
// 1 the calculator's ops, 2 the tools' ops, otherwise all of them; link-time
// optimization then leaves out the code of the others.
#include <emscripten/bind.h>

#include <string>

#include "trainsim/trainsim.h"

namespace {

std::string call(const std::string& op, const std::string& input) {
#if TRAINSIM_WASM_OPS == 1
  return trainsim::call_json_page(op, input);
#elif TRAINSIM_WASM_OPS == 2
  return trainsim::call_json_tools(op, input);
#else
  return trainsim::call_json(op, input);
#endif
}

std::string version() { return trainsim::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(trainsim) {
  emscripten::function("call", &call);
  emscripten::function("version", &version);
}
