// Data-parallel group sizes that shard optimizer state and gradients (the
// memory of a stage and the data-parallel communication of a step both follow
// them): dense parameters over dp * cp (Megatron's dp-cp group), routed experts
// over the expert-data-parallel group world / (ep * etp * pp).
#pragma once

#include "trainsim/spec.h"

namespace trainsim {

inline double dense_shard_group(const ParallelSpec& p) { return static_cast<double>(p.dp * p.cp); }

inline double expert_shard_group(const ParallelSpec& p) {
  return static_cast<double>(p.tp * p.dp * p.cp) / static_cast<double>(p.ep * p.etp);
}

}  // namespace trainsim
