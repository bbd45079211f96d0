// The field tables of a config document's three sections (schema/field.h):
// the reader, the canonical writer and the published schema all use them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schema/field.h"
#include "trainsim/spec.h"

namespace trainsim::schema {

// The "training" section before dp and the batch are resolved against the
// system's GPU count (config_reader.cpp does that once both sections are read).
struct TrainingInput {
  TrainingSpec spec;
  std::optional<int64_t> dp;
  std::optional<int64_t> global_batch_size;
  std::optional<int64_t> num_micro_batches;
  std::string batch_path;  ///< where a batch issue points: the key that set the batch
};

const Table<ModelSpec>& model_table();         // model_schema.cpp
const Table<TrainingInput>& training_table();  // training_schema.cpp
const Table<SystemSpec>& system_table();       // system_schema.cpp

// training.recompute, read and written by hand (recompute_schema.cpp).
std::vector<FieldInfo> recompute_members();
void read_recompute(const nlohmann::json& value, const std::string& path, RecomputeSpec& spec,
                    Issues& issues);
nlohmann::json recompute_to_json(const RecomputeSpec& recompute);

}  // namespace trainsim::schema
