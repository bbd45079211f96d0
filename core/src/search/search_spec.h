// A strategy search: which training plans to try for one model, system and
// global batch, and how to rank them. Plain data in SI units, parsed from JSON
// by schema/search_request.cpp; default member initializers are the documented
// defaults (README "Search and what-if").
#pragma once

#include <cstdint>
#include <vector>

#include "memory/verdict.h"
#include "trainsim/spec.h"

namespace trainsim {

enum class SearchObjective { kStepTime, kTokensPerSecondPerGpu };

// Sequence parallelism for tp > 1 (at tp = 1 it is always off: a no-op there).
enum class SequenceParallelPolicy { kAlways, kNever, kBoth };

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
  TrainingSpec training;  ///< fields every candidate shares (kernels, overlap, cp_comm_type, ...)
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
  SequenceParallelPolicy sequence_parallel = SequenceParallelPolicy::kAlways;
  bool uneven_stages = false;    ///< also try fewer layers on the first and last stage
  /// The memory verdict's headroom: a plan fits when its device memory (reserved + outside the
  /// allocator) leaves this fraction of the usable capacity free (memory/verdict.h).
  double memory_headroom = kDefaultMemoryHeadroom;
  int64_t top_k = 10;
  SearchObjective objective = SearchObjective::kStepTime;
};

}  // namespace trainsim
