// The memory verdict, suggestions, per-op table, allocator replay, outside-
// allocator terms and timeline of an estimate (issue "Will it OOM?"), as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "trainsim/result.h"

namespace trainsim::report {

// Adds the replay and outside-allocator fields to a stage object.
void add_stage_memory_json(const StageMemory& stage, nlohmann::json& out);

// Adds verdict, suggestions, ops and timeline to the memory object.
void add_memory_json(const MemoryEstimate& memory, nlohmann::json& out);

}  // namespace trainsim::report
