// Nearby plans that fit, for a plan that does not or is tight (memory.suggestions).
//
// A bounded, deterministic local search around the plan on the same GPUs and
// global batch: single changes first (expandable segments on, more recompute,
// the next ZeRO stage, twice the tp, pp or cp with half the dp, half the
// micro-batch size with twice the micro-batches, twice the ep for MoE), then
// pairs of them, at most kMaxSuggestionEstimates estimates in all. A neighbour
// is checked against the config rules (validate.h) and first by its allocated
// memory alone (a lower bound of its need); only the rest get the allocator
// replay. For a tight plan only neighbours that fit with the headroom count (the
// nearest changes that restore it). The plans that fit come back with the fewest changes first, then by
// step time, at most kMaxSuggestions of them.
#pragma once

#include <vector>

#include "estimate_options.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

inline constexpr int kMaxSuggestionEstimates = 40;
inline constexpr size_t kMaxSuggestions = 3;

// restore_headroom: the plan is "tight" (memory/verdict.h); only neighbours whose verdict is
// "fits" (the headroom restored) count.
std::vector<MemorySuggestion> memory_suggestions(const Config& config, const EstimateOptions& options,
                                                bool restore_headroom);

}  // namespace trainsim
