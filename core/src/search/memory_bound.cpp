#include "search/memory_bound.h"

#include <algorithm>

#include "memory/static_memory.h"
#include "model/pipeline_layout.h"

namespace trainsim {
namespace {

// The fewest bytes an op's weight takes: fp8 GEMMs keep 1-byte weights, every
// other weight is bf16/fp16 (model/op_factory.cpp, weight_bytes_per_param).
double min_weight_bytes_per_param(const TrainingSpec& training) {
  if (training.dtype == Dtype::kFp4) return 0.5;  // NVFP4 (model/op_context.cpp act_bytes)
  return training.dtype == Dtype::kFp8 ? 1.0 : 2.0;
}

// Prefix sums and the op-level sums of the estimate agree up to rounding; the
// margin keeps the bound below the estimate's static part.
constexpr double kRoundingMargin = 1.0 - 1e-9;

}  // namespace

StaticMemoryBound::StaticMemoryBound(const ModelSpec& model) : model_(model) {
  model_.linear_bias = false;
  prefix_.resize(static_cast<size_t>(model_.num_layers) + 1);
  for (int64_t i = 0; i < model_.num_layers; ++i) {
    prefix_[static_cast<size_t>(i) + 1] = prefix_[static_cast<size_t>(i)];
    prefix_[static_cast<size_t>(i) + 1] += layer_params(model_, i);
  }
}

double StaticMemoryBound::lower_bound_bytes(const Config& config) const {
  const ParallelSpec& p = config.training.parallel;
  const PipelineLayout layout = pipeline_layout(model_, p);
  const double weight_bytes = min_weight_bytes_per_param(config.training);
  const int64_t vocab = padded_vocab_size(model_, p.tp);
  const auto tp = static_cast<double>(p.tp);
  const auto expert_split = static_cast<double>(p.ep * p.etp);
  double bound = 0.0;
  for (int64_t stage = 0; stage < p.pp; ++stage) {
    // As stage_rank_params, with the layer sums from the prefix sums.
    ParamCounts counts;
    for (const ChunkLayers& chunk : layout[static_cast<size_t>(stage)]) {
      const ParamCounts& end = prefix_[static_cast<size_t>(chunk.first_layer + chunk.num_layers)];
      const ParamCounts& begin = prefix_[static_cast<size_t>(chunk.first_layer)];
      counts.tp_sharded += end.tp_sharded - begin.tp_sharded;
      counts.replicated += end.replicated - begin.replicated;
      counts.expert += end.expert - begin.expert;
      counts += chunk_extra_params(model_, chunk, vocab, p.pp);
    }
    const RankParams params{counts.tp_sharded / tp + counts.replicated,
                            counts.expert / expert_split};
    const StaticMemory fixed = static_memory(config.training, params, params.dense * weight_bytes,
                                             params.expert * weight_bytes);
    bound = std::max(bound, fixed.parameters_bytes + fixed.gradients_bytes + fixed.optimizer_bytes);
  }
  return bound * kRoundingMargin;
}

double StaticMemoryBound::layout_lower_bound_bytes(const Config& config) const {
  const ParallelSpec& p = config.training.parallel;
  const int64_t vocab = padded_vocab_size(model_, p.tp);
  ParamCounts counts = prefix_.back();
  counts += embedding_params(model_, vocab);
  counts += last_stage_extra_params(model_, vocab, p.pp);
  const auto pp = static_cast<double>(p.pp);
  const RankParams params{(counts.tp_sharded / static_cast<double>(p.tp) + counts.replicated) / pp,
                          counts.expert / static_cast<double>(p.ep * p.etp) / pp};
  const double weight_bytes = min_weight_bytes_per_param(config.training);
  const StaticMemory fixed = static_memory(config.training, params, params.dense * weight_bytes,
                                           params.expert * weight_bytes);
  return (fixed.parameters_bytes + fixed.gradients_bytes + fixed.optimizer_bytes) *
         kRoundingMargin;
}

}  // namespace trainsim
