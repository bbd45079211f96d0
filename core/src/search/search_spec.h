// A strategy search: which training plans to try for one model, system and
// global batch, and how to rank them. Plain data in SI units, parsed from JSON
// by schema/search_request.cpp; default member initializers are the documented
// defaults (README "Search and what-if").
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "memory/verdict.h"
#include "trainsim/spec.h"

namespace trainsim {

// What ranks the plans. time_to_train ranks like step_time (the batch is the
// search's), gpu_hours like tokens_per_s_per_gpu; both need training.train_tokens
// and let max_gpu_hours trade speed against cost over a GPU range.
enum class SearchObjective { kStepTime, kTokensPerSecondPerGpu, kTimeToTrain, kGpuHours };

// kPerLayout: the top K are the best plan of each distinct layout (GPU count,
// tp, pp, cp, ep, etp and the layout's choice keys such as a pipeline schedule).
enum class SearchDiversity { kNone, kPerLayout };

// Sequence parallelism for tp > 1 (at tp = 1 it is always off: a no-op there).
enum class SequenceParallelPolicy { kAlways, kNever, kBoth };

// Uneven first/last stages (num_layers_in_first/last_stage): kAuto tries them
// for the pipeline sizes whose layers do not split evenly (the even split is
// then invalid), kAlways for every pipeline size, kNever never.
enum class UnevenStages { kAuto, kAlways, kNever };

// Work the search refuses before enumerating (closed-form count, space.h):
// combinations of the allowed values, and layout classes (GPU count, tp, cp,
// pp, ep, etp). About 20 s of enumeration and validation on one core of a
// 2-core VM when nothing can be bounded away; DeepSeek-V3 over 512-4096 GPUs
// with every default holds ~15 M.
inline constexpr int64_t kMaxSearchCombinations = 40'000'000;
inline constexpr int64_t kMaxLayoutClasses = 400'000;
// Stage plans (split, vpp, recompute mode) over all pipeline sizes: uneven
// splits of a very deep model on 3 stages would otherwise be millions.
inline constexpr int64_t kMaxStagePlans = 250'000;

// The default memory headroom of a search: the estimate's out-of-memory verdict's
// (memory/verdict.h; README "Will it fit"), so that a plan the search returns is one
// the estimate calls "fits".
inline constexpr double kDefaultSearchMemoryHeadroom = kDefaultMemoryHeadroom;

// Training keys a search may try several values of (search/choices.h), per
// dimension in choices.h's order: enums as their enumerators' ints, numbers as
// they are. A plan holds the index of its value (at most kMaxChoiceValues each).
inline constexpr size_t kMaxChoiceDimensions = 8;
inline constexpr size_t kMaxChoiceValues = 64;

struct RecomputeMode {
  RecomputeSpec spec;
  /// Full recompute of every layer of each chunk: num_layers becomes the layers of
  /// the candidate's largest chunk (block: all layers checkpointed one by one;
  /// uniform: one checkpoint per chunk).
  bool all_layers = false;
};

struct SearchSpec {
  ModelSpec model;
  SystemSpec system;      ///< num_gpus is set per candidate
  TrainingSpec training;  ///< fields every candidate shares (kernels, overlap, train_tokens, ...)
  std::vector<int64_t> num_gpus;  ///< GPU counts to search (each its own candidates)
  int64_t global_batch_size = 0;  ///< sequences per step
  // Allowed degrees; empty = every value the rules allow (tp and etp up to max_tp,
  // cp and pp dividing the GPU count, ep dividing num_experts, vpp dividing the
  // layers of every stage, dp = num_gpus / (tp * cp * pp)).
  std::vector<int64_t> tp, pp, vpp, cp, ep, etp, dp;
  std::vector<int64_t> micro_batch_size = {1, 2, 4, 8};
  int64_t max_tp = 0;  ///< 0 = gpus_per_node (tensor parallelism stays inside a node)
  std::vector<RecomputeMode> recompute;  ///< filled by the parser (default: none, selective, full)
  std::vector<int64_t> zero_stage = {1};
  /// Values tried per choice dimension (choices.h); filled by the parser (default:
  /// the training template's value, e.g. cp_comm_type p2p, no optimizer offload).
  std::array<std::vector<double>, kMaxChoiceDimensions> choices;
  SequenceParallelPolicy sequence_parallel = SequenceParallelPolicy::kAlways;
  UnevenStages uneven_stages = UnevenStages::kAuto;
  /// The memory verdict's headroom: a plan fits when its device memory (reserved + outside the
  /// allocator) leaves this fraction of the usable capacity free (memory/verdict.h).
  double memory_headroom = kDefaultSearchMemoryHeadroom;
  double max_gpu_hours = 0.0;  ///< > 0: plans above it for train_tokens are infeasible
  int64_t top_k = 10;
  SearchObjective objective = SearchObjective::kStepTime;
  SearchDiversity diversity = SearchDiversity::kNone;
};

}  // namespace trainsim
