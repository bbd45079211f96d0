// The whole WASM boundary: JSON text in, JSON envelope out. Nothing but
// strings crosses, and every exception is caught and returned as data.
#include <emscripten/bind.h>

#include <string>

#include "trainsim/trainsim.h"

namespace {

template <typename Fn>
std::string guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& error) {
    return trainsim::internal_error_json(error.what());
  } catch (...) {
    return trainsim::internal_error_json("unknown exception");
  }
}

std::string estimate(const std::string& config) {
  return guarded([&] { return trainsim::estimate_json(config); });
}

std::string presets() {
  return guarded([] { return trainsim::presets_json(); });
}

std::string preset(const std::string& id) {
  return guarded([&] { return trainsim::preset_json(id); });
}

std::string import_simumax(const std::string& model, const std::string& strategy,
                           const std::string& system) {
  return guarded([&] { return trainsim::import_simumax_json(model, strategy, system); });
}

std::string version() { return trainsim::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(trainsim) {
  emscripten::function("estimate", &estimate);
  emscripten::function("presets", &presets);
  emscripten::function("preset", &preset);
  emscripten::function("importSimumax", &import_simumax);
  emscripten::function("version", &version);
}
