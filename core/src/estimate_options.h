// The estimator with the knobs the strategy search and the what-if analysis
// need. estimate(config) is estimate_with(config, EstimateOptions{}, nullptr);
// no option changes any figure that is computed, only which parts are
// (time_lower_bound, documented below, is the one exception).
#pragma once

#include "memory/verdict.h"
#include "model/model_plan.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

struct EstimateOptions {
  bool timeline = true;            ///< record the pipeline timeline
  bool reference_formulas = true;  ///< Korthikanti 2022 / Megatron closed forms
  bool model_summary = true;       ///< parameter counts (Estimate::model)
  bool describe = true;  ///< peak-op names, the reasons a plan does not fit, op tables and calibration
  /// Price the pipeline by its lower bound (time/pipeline_schedule.h): time.iteration_s
  /// is then a lower bound of the step time, the rest of the time part is not meaningful.
  bool time_lower_bound = false;
  /// > 0: when the peak memory exceeds this many bytes, stop after the memory
  /// part (time, throughput and timeline stay empty; fits and reasons are set).
  double time_only_within_bytes = 0.0;
  /// Replay each stage's allocation trace through the caching allocator for reserved
  /// memory (memory/stage_replay.h). false: reserved = allocated, a lower bound, and
  /// the verdict is then a lower bound of the memory need (the search's screening).
  bool allocator_replay = true;
  /// The verdict's "tight" zone (memory/verdict.h).
  double memory_headroom = kDefaultMemoryHeadroom;
  /// When the plan does not fit, look for nearby plans that do (memory.suggestions).
  bool suggestions = true;
  /// For a stage the allocator cannot serve, find the least capacity it runs in
  /// (memory/stage_replay.h; false: one replay without a limit, an overstatement).
  bool memory_need = true;
};

// cache: blocks shared across calls (see BlockCache for what must stay fixed);
// null builds every block afresh.
Estimate estimate_with(const Config& config, const EstimateOptions& options, BlockCache* cache);

// Whether estimate_with(config, options with this memory_headroom, cache) would give the memory
// verdict "fits" with the allocator replay: the memory part alone, and the replay stops as
// soon as a stage cannot fit (memory/stage_replay.h, replayed_stages_fit).
bool replayed_memory_fits(const Config& config, double memory_headroom, BlockCache* cache);

}  // namespace trainsim
