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

std::string import_hf(const std::string& config_json) {
  return guarded([&] { return trainsim::import_hf_json(config_json); });
}

std::string import_megatron(const std::string& args, const std::string& system_preset) {
  return guarded([&] { return trainsim::import_megatron_json(args, system_preset); });
}

std::string export_megatron(const std::string& config) {
  return guarded([&] { return trainsim::export_megatron_json(config); });
}

std::string export_config(const std::string& config) {
  return guarded([&] { return trainsim::export_config_json(config); });
}

std::string export_csv(const std::string& config) {
  return guarded([&] { return trainsim::export_csv_json(config); });
}

std::string search(const std::string& spec) {
  return guarded([&] { return trainsim::search_json(spec); });
}

std::string search_merge(const std::string& pages) {
  return guarded([&] { return trainsim::search_merge_json(pages); });
}

std::string whatif(const std::string& config) {
  return guarded([&] { return trainsim::whatif_json(config); });
}

std::string version() { return trainsim::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(trainsim) {
  emscripten::function("estimate", &estimate);
  emscripten::function("presets", &presets);
  emscripten::function("preset", &preset);
  emscripten::function("importSimumax", &import_simumax);
  emscripten::function("importHf", &import_hf);
  emscripten::function("importMegatron", &import_megatron);
  emscripten::function("exportMegatron", &export_megatron);
  emscripten::function("exportConfig", &export_config);
  emscripten::function("exportCsv", &export_csv);
  emscripten::function("search", &search);
  emscripten::function("searchMerge", &search_merge);
  emscripten::function("whatif", &whatif);
  emscripten::function("version", &version);
}
