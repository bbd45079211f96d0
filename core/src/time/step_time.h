// The step time: per-stage forward/backward phases from the ops, the pipeline
// schedule's makespan, the straggler slowdown, then data-parallel
// communication and the optimizer, plus throughput and the timeline.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_plan.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// Timelines beyond this many pipeline passes (stages x chunks x micro-batches)
// are omitted (too large to draw); Estimate::timeline.included says which.
inline constexpr int64_t kMaxTimelinePasses = 4096;

struct TimeOptions {
  bool timeline = true;  ///< record the pipeline timeline
  /// Price the pipeline with pipeline_lower_bound() instead of simulating it:
  /// iteration_s becomes a lower bound of the step time (the breakdown is then
  /// not meaningful). Used by the strategy search.
  bool pipeline_lower_bound = false;
  /// Explain the critical stage's breakdown into out.explanations (time/explain_time.h).
  bool explain = false;
  /// Fill time.ops (the critical stage's per-op table) and out.calibration (the
  /// figures the estimate rests on). Off where only the step time is read (the
  /// search's screening, what-if): they change no time.
  bool op_table = true;
};

// Seconds of each stage-boundary transfer of one micro-batch's activations (or their
// gradients): entry s is stage s to s + 1, the last wraps to stage 0 (interleaved).
std::vector<double> pipeline_boundary_p2p_s(const Config& config);

// Fills out.time, out.throughput and out.timeline. memory gives each stage's
// parameter counts (they size data-parallel traffic and the optimizer).
void estimate_time(const Config& config, const ModelPlan& plan,
                   const std::vector<StageMemory>& memory, Estimate& out,
                   const TimeOptions& options = {});

}  // namespace trainsim
