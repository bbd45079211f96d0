// Helpers shared by the importer / exporter tests.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "schema/config_writer.h"
#include "test_util.h"
#include "trainsim/trainsim.h"

namespace trainsim::testing {

// "" when every key of `expected` (recursively) has the same value in
// `actual`; otherwise the first differing path and both values.
inline std::string subset_mismatch(const nlohmann::json& expected, const nlohmann::json& actual,
                                   const std::string& path = "") {
  if (expected.is_object()) {
    if (!actual.is_object()) return path + ": expected an object, got " + actual.dump();
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key)) return path + "/" + key + ": missing, expected " + value.dump();
      const std::string mismatch = subset_mismatch(value, actual[key], path + "/" + key);
      if (!mismatch.empty()) return mismatch;
    }
    return "";
  }
  if (expected != actual) return path + ": expected " + expected.dump() + ", got " + actual.dump();
  return "";
}

// Parses and validates a config document; throws with the errors if it is bad.
inline Config parse_ok(const nlohmann::json& document) {
  Config config;
  Issues issues;
  if (!parse_config(document.dump(), config, issues)) {
    std::string text;
    for (const Issue& issue : issues) text += issue.path + ": " + issue.message + "; ";
    throw std::runtime_error("config rejected: " + text + document.dump());
  }
  return config;
}

// The canonical JSON of a config with the fields an exchange format cannot
// carry reset: the model name, and the position-table size of RoPE models
// (it has no effect on the estimate).
inline nlohmann::json comparable(const Config& config) {
  nlohmann::json out = schema::config_to_json(config);
  out["model"]["name"] = "";
  if (config.model.position_embedding == PositionEmbedding::kRope) {
    out["model"]["max_position_embeddings"] = 0;
  }
  return out;
}

// The first differing JSON pointer of two documents, or "".
inline std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json patch = nlohmann::json::diff(a, b);
  return patch.empty() ? "" : patch[0].dump();
}

// Preset ids from the preset files (usable while tests are registered, before
// the embedded presets are guaranteed to be initialized).
inline std::vector<std::string> preset_file_ids(const std::string& kind) {
  std::vector<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TRAINSIM_PRESETS_DIR) + "/" + kind)) {
    if (entry.path().extension() == ".json") ids.push_back(entry.path().stem().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

inline bool has_note(const nlohmann::json& notes, const std::string& part) {
  for (const auto& note : notes) {
    if (note.get<std::string>().find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace trainsim::testing
