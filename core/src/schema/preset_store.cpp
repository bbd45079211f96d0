#include "schema/preset_store.h"

#include "schema/json_reader.h"

#include <map>
#include <utility>

namespace trainsim::schema {
namespace {

using PresetMap = std::map<std::pair<std::string, std::string>, nlohmann::json>;

const PresetMap& parsed_presets() {
  static const PresetMap presets = [] {
    PresetMap map;
    for (const auto& preset : embedded_presets()) {
      nlohmann::json document;
      Issues issues;
      TRAINSIM_CHECK(parse_document(preset.text, "", document, issues),
                     "embedded preset \"" + std::string(preset.id) + "\" is not JSON");
      map.emplace(std::make_pair(std::string(preset.kind), std::string(preset.id)), std::move(document));
    }
    return map;
  }();
  return presets;
}

}  // namespace

const nlohmann::json* find_preset(std::string_view kind, std::string_view id) {
  const auto& presets = parsed_presets();
  const auto it = presets.find(std::make_pair(std::string(kind), std::string(id)));
  return it == presets.end() ? nullptr : &it->second;
}

std::vector<std::string> preset_ids(std::string_view kind) {
  std::vector<std::string> ids;
  for (const auto& preset : embedded_presets()) {
    if (kind == preset.kind) ids.emplace_back(preset.id);
  }
  return ids;
}

}  // namespace trainsim::schema
