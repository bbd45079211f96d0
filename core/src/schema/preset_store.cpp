#include "schema/preset_store.h"

#include "schema/json_reader.h"

#include <map>
#include <set>
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
  if (it != presets.end()) return &it->second;
  for (const auto& [key, document] : presets) {
    if (key.first == kind && preset_aliases(document).count(std::string(id)) > 0) return &document;
  }
  return nullptr;
}

std::set<std::string> preset_aliases(const nlohmann::json& document) {
  std::set<std::string> out;
  const auto it = document.find("aliases");
  if (it == document.end() || !it->is_array()) return out;
  for (const auto& alias : *it) {
    if (alias.is_string()) out.insert(alias.get<std::string>());
  }
  return out;
}

std::vector<std::string> preset_ids(std::string_view kind) {
  std::vector<std::string> ids;
  for (const auto& preset : embedded_presets()) {
    if (kind == preset.kind) ids.emplace_back(preset.id);
  }
  return ids;
}

}  // namespace trainsim::schema
