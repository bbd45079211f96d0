// A cheap lower bound of a plan's peak memory, to prune before estimating:
// the weights, main gradients and optimizer states of its most loaded stage
// (parameter counts from model/param_count.h as in stage_rank_params, bytes per
// parameter and ZeRO sharding from memory/static_memory.h). The estimate's stage
// peak adds TE buffers, activations and the running op's working set to the
// same static part (memory/stage_memory.cpp), so peak >= this bound
// (tests/unit/search_test.cpp checks it on every preset).
#pragma once

#include <vector>

#include "model/param_count.h"
#include "trainsim/spec.h"

namespace trainsim {

class StaticMemoryBound {
 public:
  // Counts the model's layers once. Linear biases are left out: the op-level
  // estimate holds no bias parameters, the closed-form counts do.
  explicit StaticMemoryBound(const ModelSpec& model);

  // Call only on a validated config of that model.
  double lower_bound_bytes(const Config& config) const;

  // A lower bound for every stage split and vpp of the config's degrees, ZeRO
  // stage and optimizer offload (nothing else that varies between plans is
  // read, so the config need not be valid):
  // static memory is linear in a stage's parameters, so the most loaded stage
  // holds at least the static memory of the average stage.
  double layout_lower_bound_bytes(const Config& config) const;

 private:
  ModelSpec model_;
  std::vector<ParamCounts> prefix_;  ///< prefix_[i]: layers [0, i) summed
};

}  // namespace trainsim
