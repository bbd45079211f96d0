// The step time: per-stage forward/backward phases from the ops, the pipeline
// schedule's makespan, the straggler slowdown, then data-parallel
// communication and the optimizer, plus throughput and the timeline.
#pragma once

#include <vector>

#include "model/model_plan.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// Fills out.time, out.throughput and out.timeline (unless record_timeline is
// false: the strategy search skips it). memory gives each stage's parameter
// counts (they size data-parallel traffic and the optimizer).
void estimate_time(const Config& config, const ModelPlan& plan,
                   const std::vector<StageMemory>& memory, Estimate& out,
                   bool record_timeline = true);

}  // namespace trainsim
