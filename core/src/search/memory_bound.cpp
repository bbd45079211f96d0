#include "search/memory_bound.h"

#include <algorithm>

#include "memory/static_memory.h"
#include "model/param_count.h"
#include "model/pipeline_layout.h"

namespace trainsim {
namespace {

// The fewest bytes an op's weight takes: fp8 GEMMs keep 1-byte weights, every
// other weight is bf16/fp16 (model/op_factory.cpp, weight_bytes_per_param).
double min_weight_bytes_per_param(const TrainingSpec& training) {
  return training.dtype == Dtype::kFp8 ? 1.0 : 2.0;
}

// The op-level sums of the estimate and these closed forms agree up to
// rounding; the margin keeps the bound below the estimate's static part.
constexpr double kRoundingMargin = 1.0 - 1e-9;

}  // namespace

StaticMemoryBound::StaticMemoryBound(const ModelSpec& model) : model_(model) {
  model_.linear_bias = false;
}

double StaticMemoryBound::lower_bound_bytes(const Config& config) const {
  const ParallelSpec& p = config.training.parallel;
  const PipelineLayout layout = pipeline_layout(model_.num_layers, p);
  const double weight_bytes = min_weight_bytes_per_param(config.training);
  double bound = 0.0;
  for (int64_t stage = 0; stage < p.pp; ++stage) {
    const RankParams params = stage_rank_params(model_, p, layout, stage);
    const StaticMemory fixed = static_memory(config.training, params, params.dense * weight_bytes,
                                             params.expert * weight_bytes);
    bound = std::max(bound, fixed.parameters_bytes + fixed.gradients_bytes + fixed.optimizer_bytes);
  }
  return bound * kRoundingMargin;
}

}  // namespace trainsim
