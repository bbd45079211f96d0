// JSON document -> Config. The only place that converts human units (GiB,
// GB/s, TFLOP/s, us) into the SI units of spec.h (through the tables'
// scales), and the only place that resolves preset ids. Structural problems
// (types, ranges, unknown keys) become Issues here; the cross-field rules are
// validate.h's.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "schema/config_schema.h"
#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim::schema {

// Resolves `"model": "id"` or `{"preset": "id", ...overrides}` against the
// embedded presets of `kind` ("model" or "system"): returns the merged object
// (overrides applied with JSON merge-patch semantics) or null on an issue.
nlohmann::json resolve_preset_reference(const nlohmann::json& value, const char* kind,
                                        const std::string& path, Issues& issues);

// One section, read by its table (config_schema.h).
void read_model(const nlohmann::json& value, const std::string& path, ModelSpec& model,
                Issues& issues);
void read_training_input(const nlohmann::json& value, const std::string& path,
                         TrainingInput& input, Issues& issues);
void read_system(const nlohmann::json& value, const std::string& path, SystemSpec& system,
                 Issues& issues);

// Whole document: {"model":..., "training":..., "system":...}.
// Structure only: cross-field rules are validate()'s.
bool read_config(std::string_view text, Config& config, Issues& issues);
bool read_config_document(const nlohmann::json& document, Config& config, Issues& issues);

}  // namespace trainsim::schema
