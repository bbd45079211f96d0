// The per-op memory table of a stage: for each distinct block (a kind of
// layer, the embedding, the head) the bytes each op saves for backward and
// the working set it needs forward and backward, for one micro-batch
// (memory.ops in the result).
#pragma once

#include <vector>

#include "model/model_plan.h"
#include "trainsim/result.h"

namespace trainsim {

std::vector<MemoryOpRow> memory_op_table(const ModelPlan& plan, size_t stage);

}  // namespace trainsim
