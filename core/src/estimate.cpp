// The estimator pipeline: the only place that knows the order of the parts.
#include <algorithm>

#include "estimate_options.h"
#include "memory/explain_memory.h"
#include "memory/reference_formulas.h"
#include "memory/op_table.h"
#include "memory/stage_memory.h"
#include "memory/stage_replay.h"
#include "estimate_suggestions.h"
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

// The verdict decides `fits`; an out-of-memory plan's reasons are the
// estimate's reasons, a tight plan's go to its notes.
void apply_verdict(const Config& config, const EstimateOptions& options, Estimate& estimate) {
  MemoryEstimate& m = estimate.memory;
  m.verdict = memory_verdict(config, m.stages, options.memory_headroom, options.describe);
  estimate.fits = m.verdict.status != "out_of_memory";
  for (const std::string& reason : m.verdict.reasons) {
    (estimate.fits ? estimate.notes : estimate.reasons).push_back(reason);
  }
  if (options.describe && config.system.gpu.usable_memory_bytes <= 0.0) {
    estimate.notes.push_back(
        "system.gpu.usable_memory_mib is not given: the memory verdict checks against "
        "hbm_capacity_gib, which is more than PyTorch can use (an H100 80GB reports 81,089 MiB)");
  }
}

// Stages whose traces are past the replay's bounds (memory/stage_replay.h).
void note_unreplayed_stages(Estimate& estimate) {
  int64_t count = 0, first = -1;
  for (const StageMemory& s : estimate.memory.stages) {
    if (s.allocator.replayed) continue;
    if (count++ == 0) first = s.stage;
  }
  if (count == 0) return;
  estimate.notes.push_back(
      std::to_string(count) + " pipeline stage(s) (the first: stage " + std::to_string(first) +
      ") were not replayed through the caching allocator: their allocation traces are past the "
      "replay's bounds; their reserved bytes are the allocated peak, a lower bound");
}

}  // namespace

Estimate estimate(const Config& config) { return estimate_with(config, EstimateOptions{}, nullptr); }

bool replayed_memory_fits(const Config& config, double memory_headroom, BlockCache* cache) {
  const ModelPlan plan = build_model_plan(config, cache);
  ScheduleInFlight in_flight;
  if (config.training.parallel.schedule != PipelineSchedule::kOneFOneB) {
    in_flight = schedule_in_flight(config, chunk_stored_bytes(plan), chunk_pass_over_bytes(plan));
  }
  std::vector<StageMemory> stages = estimate_stage_memory(config, plan, false, &in_flight);
  lower_bound_reserved(config, stages);
  return replayed_stages_fit(config, plan, stages, memory_headroom, &in_flight);
}

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
  result.memory.stages = estimate_stage_memory(config, plan, options.describe, &in_flight,
                                               options.describe ? &result.explanations : nullptr);
  if (options.reference_formulas) {
    result.memory.korthikanti2022_activations_bytes =
        korthikanti_activation_bytes(config.model, config.training);
    result.memory.megatron_theoretical_bytes =
        megatron_theoretical_memory_bytes(config.model, config.training);
  }
  if (options.allocator_replay) {
    ReplayOptions replay;
    replay.describe = options.describe;
    replay.find_need = options.memory_need;
    replay_stage_memory(config, plan, result.memory.stages, replay, &in_flight);
    if (options.describe) note_unreplayed_stages(result);
  } else {
    lower_bound_reserved(config, result.memory.stages);
  }
  if (options.describe) {
    for (const StageMemory& s : result.memory.stages) explain_stage_device(s, result.explanations);
  }
  for (const StageMemory& s : result.memory.stages) {
    if (s.peak_bytes > result.memory.peak_bytes) {
      result.memory.peak_bytes = s.peak_bytes;
      result.memory.peak_stage = s.stage;
    }
    result.memory.reserved_bytes = std::max(result.memory.reserved_bytes, s.reserved_bytes);
    result.memory.device_bytes = std::max(result.memory.device_bytes, s.device_bytes);
  }
  if (options.describe) {
    result.memory.ops = memory_op_table(plan, static_cast<size_t>(result.memory.peak_stage));
  }
  apply_verdict(config, options, result);
  // Out of memory: the nearest changes that fit; tight: those that restore the headroom.
  if (result.memory.verdict.status != "fits" && options.suggestions) {
    result.memory.suggestions = memory_suggestions(config, options, result.fits);
  }
  if (options.time_only_within_bytes > 0.0 &&
      result.memory.peak_bytes > options.time_only_within_bytes) {
    return result;
  }
  TimeOptions time_options;
  time_options.timeline = options.timeline;
  time_options.pipeline_lower_bound = options.time_lower_bound;
  time_options.explain = options.describe && !options.time_lower_bound;
  time_options.op_table = options.describe;
  estimate_time(config, plan, result.memory.stages, result, time_options);
  return result;
}

}  // namespace trainsim
