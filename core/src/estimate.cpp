// The estimator pipeline: the only place that knows the order of the parts.
#include <algorithm>

#include "estimate_options.h"
#include "memory/reference_formulas.h"
#include "memory/stage_memory.h"
#include "model/model_plan.h"
#include "model/param_count.h"
#include "time/pipeline_run.h"
#include "time/step_time.h"
#include "trainsim/trainsim.h"
#include "trainsim/units.h"

namespace trainsim {
namespace {

ModelSummary summarize_model(const Config& config) {
  const ModelSpec& m = config.model;
  ModelSummary s;
  s.parameters = total_params(m);
  s.active_parameters = active_params(m);
  s.padded_vocab_size = padded_vocab_size(m, config.training.parallel.tp);
  s.num_moe_layers = num_moe_layers(m);
  s.num_dense_layers = m.num_layers - s.num_moe_layers;
  return s;
}

void check_fit(const Config& config, bool describe, Estimate& estimate) {
  const double capacity = config.system.gpu.hbm_capacity_bytes;
  for (const StageMemory& stage : estimate.memory.stages) {
    if (stage.peak_bytes > capacity) {
      estimate.fits = false;
      if (!describe) continue;
      estimate.reasons.push_back(
          "stage " + std::to_string(stage.stage) + " needs " +
          std::to_string(stage.peak_bytes / kGiB).substr(0, 6) + " GiB at its peak but the GPU has " +
          std::to_string(capacity / kGiB).substr(0, 6) + " GiB");
    }
  }
}

}  // namespace

Estimate estimate(const Config& config) { return estimate_with(config, EstimateOptions{}, nullptr); }

Estimate estimate_with(const Config& config, const EstimateOptions& options, BlockCache* cache) {
  Estimate result;
  if (options.model_summary) result.model = summarize_model(config);
  const ModelPlan plan = build_model_plan(config, cache);
  result.memory.capacity_bytes = config.system.gpu.hbm_capacity_bytes;
  // Zero-bubble and DualPipe schedules: the activations their pass order keeps
  // alive (Megatron's schedules are replayed by the memory model itself).
  ScheduleInFlight in_flight;
  if (config.training.parallel.schedule != PipelineSchedule::kOneFOneB) {
    in_flight = schedule_in_flight(config, chunk_stored_bytes(plan), chunk_pass_over_bytes(plan));
  }
  result.memory.stages = estimate_stage_memory(config, plan, options.describe, &in_flight);
  if (options.reference_formulas) {
    result.memory.korthikanti2022_activations_bytes =
        korthikanti_activation_bytes(config.model, config.training);
    result.memory.megatron_theoretical_bytes =
        megatron_theoretical_memory_bytes(config.model, config.training);
  }
  for (const StageMemory& s : result.memory.stages) {
    if (s.peak_bytes > result.memory.peak_bytes) {
      result.memory.peak_bytes = s.peak_bytes;
      result.memory.peak_stage = s.stage;
    }
    result.memory.reserved_bytes = std::max(result.memory.reserved_bytes, s.reserved_bytes);
  }
  check_fit(config, options.describe, result);
  if (options.time_only_within_bytes > 0.0 &&
      result.memory.peak_bytes > options.time_only_within_bytes) {
    return result;
  }
  TimeOptions time_options;
  time_options.timeline = options.timeline;
  time_options.pipeline_lower_bound = options.time_lower_bound;
  estimate_time(config, plan, result.memory.stages, result, time_options);
  return result;
}

}  // namespace trainsim
