// The "training" section before dp and the batch are resolved against the
// system's GPU count (config_json.cpp does that once both sections are read).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim::schema {

struct TrainingInput {
  TrainingSpec spec;
  std::optional<int64_t> dp;
  std::optional<int64_t> global_batch_size;
  std::optional<int64_t> num_micro_batches;
  std::string batch_path;
};

void read_training_input(const nlohmann::json& value, const std::string& path,
                         TrainingInput& input, Issues& issues);

}  // namespace trainsim::schema
