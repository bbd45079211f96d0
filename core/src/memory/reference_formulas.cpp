#include "memory/reference_formulas.h"

#include <algorithm>

#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

double interleave_factor(const ParallelSpec& p) {
  return p.vpp > 1 ? 1.0 + d(p.pp - 1) / d(p.pp * p.vpp) : 1.0;
}

}  // namespace

double korthikanti_activation_bytes(const ModelSpec& m, const TrainingSpec& t) {
  const ParallelSpec& p = t.parallel;
  const double sbh = d(t.seq_len) * d(t.micro_batch_size) * d(m.hidden_size);
  const double tp = d(p.tp);
  const double attention = 5.0 * d(m.num_attention_heads) * d(t.seq_len) / d(m.hidden_size);
  const bool sp = p.sequence_parallel && p.tp > 1;
  double per_layer = 0.0;
  switch (t.recompute.granularity) {
    case RecomputeGranularity::kNone:
      per_layer = sp ? sbh / tp * (34.0 + attention) : sbh * (10.0 + 24.0 / tp + attention / tp);
      break;
    case RecomputeGranularity::kSelective:
      per_layer = sp ? 34.0 * sbh / tp : sbh * (10.0 + 24.0 / tp);
      break;
    case RecomputeGranularity::kFull:
      per_layer = 2.0 * sbh / (sp ? tp : 1.0);
      break;
  }
  return d(m.num_layers) * per_layer * interleave_factor(p);
}

double megatron_theoretical_memory_bytes(const ModelSpec& m, const TrainingSpec& t) {
  const ParallelSpec& p = t.parallel;
  const double h = d(m.hidden_size), s = d(t.seq_len), b = d(t.micro_batch_size);
  const double layers = d(m.num_layers), pp = d(p.pp), tp = d(p.tp);
  // Weights and optimizer of the first (most loaded) stage.
  ParamCounts all;
  for (int64_t i = 0; i < m.num_layers; ++i) all += layer_params(m, i);
  const int64_t vocab = padded_vocab_size(m, p.tp);
  const double embedding = d(vocab) * h;
  const double dense = (all.tp_sharded / pp + embedding) / tp + all.replicated / pp +
                       (!m.tie_embeddings && p.pp == 1 ? embedding / tp : 0.0);
  const double expert = all.expert / pp / d(p.ep * p.etp);
  const double dp = d(p.dp), expert_dp = d(p.tp * p.dp * p.cp) / d(p.ep * p.etp);
  auto bytes_per_param = [&](double group) { return t.zero_stage >= 1 ? 6.0 + 12.0 / group : 18.0; };
  const double weights_and_optimizer = dense * bytes_per_param(dp) + expert * bytes_per_param(expert_dp);
  // Activations (first stage, pp micro-batches in flight).
  const double interleave = p.vpp > 1 ? interleave_factor(p) : std::min(1.0, d(t.num_micro_batches) / pp);
  const double ffn_ratio = d(m.ffn_hidden_size) / h;
  double activations = 0.0;
  if (p.sequence_parallel && t.recompute.granularity == RecomputeGranularity::kSelective) {
    activations = (layers * s * b * h * (18.0 + 4.0 * ffn_ratio) + 8.0 * s * b * pp + s * b * h * pp) *
                  interleave;
    if (p.pp == 1) activations += 4.0 * s * b * h * (1.0 + d(vocab) / h);
    activations /= tp;
  } else {
    activations = (layers * s * b * h * (10.0 + 24.0 / tp) + 8.0 * s * b * pp + s * b * h * pp) *
                  interleave;
    if (p.pp == 1) activations += 2.0 * (s * b * d(vocab) / tp + s * b * h);
    activations *= 1.05;
  }
  return weights_and_optimizer + activations;
}

}  // namespace trainsim
