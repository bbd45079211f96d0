// Explanations of the critical stage's step-time parts (Estimate::explanations,
// pointers /time/breakdown/...), from the figures step_time.cpp computed them with.
#pragma once

#include <cstdint>
#include <vector>

#include "time/dp_optimizer_time.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

struct StageTimeFigures {
  int64_t stage = 0;
  int64_t bottleneck_stage = 0;
  double micro_batches_per_chunk = 0.0;
  double forward_s = 0.0;    ///< per micro-batch, all chunks: ops' forward time
  double backward_s = 0.0;
  double recompute_s = 0.0;
  double forward_host_s = 0.0;   ///< per micro-batch: GPU waiting for the CPU
  double backward_host_s = 0.0;
  double tp_s = 0.0;  ///< exposed in-layer communication per micro-batch
  double cp_s = 0.0;
  double ep_s = 0.0;
  double hidden_ep_s = 0.0;       ///< over the step: EP all-to-all DualPipe / EP overlap hides
  double shared_hidden_ep_s = 0.0;  ///< per micro-batch: all-to-all the shared experts hide
  double makespan_s = 0.0;        ///< the pipeline's makespan
  double busy_s = 0.0;            ///< this stage's work inside the pipeline
  double bottleneck_busy_s = 0.0;
  double p2p_s = 0.0;             ///< this stage's exposed send/recv time in the run
  double dp_in_pipeline_s = 0.0;  ///< ZeRO 2/3 communication lengthening the passes
  double offload_exposed_s = 0.0; ///< activation offload: copy waits of one micro-batch
  double dp_step_exposed_s = 0.0; ///< after the pipeline
  double straggler_ratio = 1.0;
  std::vector<OptimizerPass> optimizer;
};

void explain_time_breakdown(const Config& config, const StageTimeFigures& figures,
                            const TimeBreakdown& breakdown, std::vector<Explanation>& out);

}  // namespace trainsim
