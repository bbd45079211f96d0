// Peak memory of each pipeline stage: static state (weights, main grads,
// optimizer, TE buffers) plus the activations of the micro-batches in flight
// at the worst moment of the schedule.
//
// In flight under 1F1B: stage r runs min(pp - r - 1, m) warm-up forwards and
// then holds one more, so min(pp - r, m) micro-batches' activations
// (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_without_interleaving). Interleaved: the
// forward/backward order of forward_backward_pipelining_with_interleaving is
// replayed chunk by chunk (warm-up (pp - r - 1) * 2 + (vpp - 1) * group).
#pragma once

#include "model/model_plan.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// describe_peaks: name each stage's peak op (StageMemory::peak_op); the search skips it.
std::vector<StageMemory> estimate_stage_memory(const Config& config, const ModelPlan& plan,
                                               bool describe_peaks = true);

}  // namespace trainsim
