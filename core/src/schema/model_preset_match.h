// Which model preset a model is: an imported config.json, Megatron-LM command
// or SimuMax file that describes Llama 3 8B selects the "llama3-8b" preset.
#pragma once

#include <string>

#include "trainsim/spec.h"

namespace trainsim::schema {

// The id of the embedded model preset equal to `model` in every field but its
// name (both as the config writer states them, every default spelled out),
// or "" when none is.
std::string matching_model_preset(const ModelSpec& model);

}  // namespace trainsim::schema
