// What an estimate reports about its ops and its figures: the per-op table of
// the critical stage (time.ops) and the provenance of every system figure the
// time model used (result.calibration).
#pragma once

#include <vector>

#include "model/model_plan.h"
#include "time/op_time.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// The critical stage's ops per micro-batch (forward + backward + recompute),
// summed over identical layers and grouped by (name, kind), in first-seen order.
std::vector<OpTimeRow> stage_op_rows(const Config& config, const ModelPlan& plan,
                                     const std::vector<std::vector<OpTime>>& per_op,
                                     int64_t stage);

// Every figure the ops of the plan used, with its provenance (the entry of its
// pointer or nearest ancestor in system.provenance); calibrated is false when
// a used figure is assumed, set in the config, or has no provenance. The host
// figures count as used only when the GPU waited for the host (`host_waited`).
Calibration calibration_of(const Config& config, const ModelPlan& plan,
                           const std::vector<std::vector<OpTime>>& per_op, bool host_waited);

}  // namespace trainsim
