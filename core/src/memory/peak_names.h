// Human names for where memory peaks: "layer 3 mlp.linear_fc2 (backward)",
// "F mb 3 chunk 0", "param_buffer (setup)".
#pragma once

#include <cstdint>
#include <string>

#include "memory/allocation_trace.h"
#include "model/model_plan.h"

namespace trainsim {

// An op of a plan block (op < 0: the end of the block; block < 0: end of forward).
std::string describe_op(const ModelPlan& plan, int32_t block, int32_t op, int64_t layer,
                        WalkPhase phase);

// Where a trace label points: the op (with its pass) or the long-lived buffer.
std::string describe_label(const ModelPlan& plan, const TraceLabel& label);

// The pass of a label, compactly: "F mb 3 chunk 0", "B mb 0 chunk 1", "setup".
std::string describe_pass(const TraceLabel& label);

}  // namespace trainsim
