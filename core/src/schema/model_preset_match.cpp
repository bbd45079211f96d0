#include "schema/model_preset_match.h"

#include <utility>
#include <vector>

#include "schema/config_reader.h"
#include "schema/config_writer.h"
#include "schema/preset_store.h"

namespace trainsim::schema {
namespace {

// The model as the writer states it, without what does not shape it: the name
// (a label), and the position-table size of a model without a learned table
// (ModelSpec: kLearned only; a RoPE config.json states its context length there).
nlohmann::json canonical(const ModelSpec& model) {
  nlohmann::json out = model_to_json(model);
  out.erase("name");
  if (model.position_embedding != PositionEmbedding::kLearned) out.erase("max_position_embeddings");
  return out;
}

// Every model preset's canonical form, read once (the presets are compiled in).
const std::vector<std::pair<std::string, nlohmann::json>>& canonical_presets() {
  static const std::vector<std::pair<std::string, nlohmann::json>> kPresets = [] {
    std::vector<std::pair<std::string, nlohmann::json>> presets;
    for (const std::string& id : preset_ids("model")) {
      Issues issues;
      ModelSpec model;
      read_model(find_preset("model", id)->at("model"), "/model", model, issues);
      if (issues.empty()) presets.emplace_back(id, canonical(model));
    }
    return presets;
  }();
  return kPresets;
}

}  // namespace

std::string matching_model_preset(const ModelSpec& model) {
  const nlohmann::json mine = canonical(model);
  for (const auto& [id, preset] : canonical_presets()) {
    if (preset == mine) return id;
  }
  return "";
}

}  // namespace trainsim::schema
