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
#include "model/schedule_in_flight.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// Other schedules (zero bubble, DualPipe): the chunk activations their order
// keeps alive at each rank's peak (model/schedule_in_flight.h), each a whole
// chunk's stored bytes, or its weight_kept_fraction while its W is pending; the
// op running at the peak adds its working set on top. DualPipe's ranks hold two
// stages' weights, gradients and optimizer states (the plan's two chunks).
//
// describe_peaks: name each stage's peak op (StageMemory::peak_op); the search skips it.
// in_flight: required for every schedule other than 1f1b.
// explain: when given, each stage's allocated parts are explained into it.
std::vector<StageMemory> estimate_stage_memory(const Config& config, const ModelPlan& plan,
                                               bool describe_peaks = true,
                                               const ScheduleInFlight* in_flight = nullptr,
                                               std::vector<Explanation>* explain = nullptr);

// Bytes one micro-batch stores through each chunk, [rank][chunk] (the weights
// activation_peaks() picks each rank's peak with).
std::vector<std::vector<double>> chunk_stored_bytes(const ModelPlan& plan);

// What a micro-batch's forward and backward pass of each chunk hold beyond its
// stored bytes at their own peaks, [rank][chunk] (activation_peaks() pass_bytes).
std::vector<std::vector<PassOverBytes>> chunk_pass_over_bytes(const ModelPlan& plan);

}  // namespace trainsim
