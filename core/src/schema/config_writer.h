// Config -> canonical trainsim JSON: presets expanded, every field written
// with its value (defaults included), human units as the reader expects
// (GiB, GB/s, TFLOP/s, us). Written by the same tables the reader uses
// (config_schema.h), so read_config(config_to_json(c)) gives back c, up to the
// 12 significant digits kept for unit-converted numbers.
#pragma once

#include <nlohmann/json.hpp>

#include "trainsim/spec.h"

namespace trainsim::schema {

nlohmann::json model_to_json(const ModelSpec& model);
nlohmann::json training_to_json(const TrainingSpec& training);
nlohmann::json system_to_json(const SystemSpec& system);
nlohmann::json config_to_json(const Config& config);

}  // namespace trainsim::schema
