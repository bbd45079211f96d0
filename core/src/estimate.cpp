// The estimator pipeline: the only place that knows the order of the parts.
#include <algorithm>

#include "memory/static_memory.h"
#include "model/param_count.h"
#include "model/pipeline_layout.h"
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
  s.num_moe_layers = m.moe ? m.num_layers - m.moe->num_dense_layers : 0;
  s.num_dense_layers = m.num_layers - s.num_moe_layers;
  return s;
}

void check_fit(const Config& config, Estimate& estimate) {
  const double capacity = config.system.gpu.hbm_capacity_bytes;
  for (const StageMemory& stage : estimate.memory.stages) {
    if (stage.peak_bytes > capacity) {
      estimate.fits = false;
      estimate.reasons.push_back(
          "stage " + std::to_string(stage.stage) + " needs " +
          std::to_string(stage.peak_bytes / kGiB).substr(0, 6) + " GiB at its peak but the GPU has " +
          std::to_string(capacity / kGiB).substr(0, 6) + " GiB");
    }
  }
}

}  // namespace

Estimate estimate(const Config& config) {
  Estimate result;
  result.model = summarize_model(config);
  const ParallelSpec& p = config.training.parallel;
  const PipelineLayout layout = pipeline_layout(config.model.num_layers, p);
  result.memory.capacity_bytes = config.system.gpu.hbm_capacity_bytes;
  for (int64_t stage = 0; stage < p.pp; ++stage) {
    StageMemory s;
    s.stage = stage;
    for (const ChunkLayers& chunk : layout[static_cast<size_t>(stage)]) {
      s.layers_per_chunk.push_back(chunk.num_layers);
    }
    const RankParams params = stage_rank_params(config.model, p, layout, stage);
    s.dense_parameters = params.dense;
    s.expert_parameters = params.expert;
    const StaticMemory fixed = static_memory(config.training, params);
    s.parameters_bytes = fixed.parameters_bytes;
    s.gradients_bytes = fixed.gradients_bytes;
    s.optimizer_bytes = fixed.optimizer_bytes;
    s.peak_bytes = s.parameters_bytes + s.gradients_bytes + s.optimizer_bytes + s.buffers_bytes +
                   s.activations_bytes + s.transient_bytes;
    s.reserved_bytes = s.peak_bytes;
    result.memory.stages.push_back(s);
  }
  for (const StageMemory& s : result.memory.stages) {
    if (s.peak_bytes > result.memory.peak_bytes) {
      result.memory.peak_bytes = s.peak_bytes;
      result.memory.peak_stage = s.stage;
    }
    result.memory.reserved_bytes = std::max(result.memory.reserved_bytes, s.reserved_bytes);
  }
  check_fit(config, result);
  return result;
}

}  // namespace trainsim
