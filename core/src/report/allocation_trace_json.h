// One stage's allocation trace as JSON, for replaying it through PyTorch's
// real allocator on a GPU (tests/validation/allocator_replay_gpu.py reads the
// "events" list: [id, size_bytes, is_free]), with trainsim's own replay figures
// for the same events, native and with expandable segments.
#pragma once

#include <nlohmann/json.hpp>

#include "trainsim/spec.h"

namespace trainsim::report {

// Events past this many are not written (the op answers with an error instead).
inline constexpr int64_t kMaxExportedTraceEvents = 4'000'000;

// stage must be a valid stage of the config's pipeline; false when the trace is
// longer than kMaxExportedTraceEvents (`events` then holds its length).
bool allocation_trace_json(const Config& config, int64_t stage, nlohmann::json& out, int64_t& events);

}  // namespace trainsim::report
