// Presets compiled into the library (presets/**/*.json, embedded at build
// time by core/embed_presets.cmake), so the CLI and the WASM module resolve
// the same ids without any file access.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::schema {

struct EmbeddedPreset {
  const char* kind;  ///< "model" or "system"
  const char* id;
  const char* text;
};

// Generated: every preset file, sorted by kind then id.
const std::vector<EmbeddedPreset>& embedded_presets();

// The parsed preset document, or null when no preset of that kind has the id
// as its id or among its "aliases" (older names of the same preset, e.g. the
// paper's name of a model released under another: links and configs that use
// them keep working, and lists show the preset once).
const nlohmann::json* find_preset(std::string_view kind, std::string_view id);

// A preset document's "aliases" (none when absent).
std::set<std::string> preset_aliases(const nlohmann::json& document);

std::vector<std::string> preset_ids(std::string_view kind);

}  // namespace trainsim::schema
