#include "model/flops.h"

#include <algorithm>

#include "model/attention_window.h"
#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

// Per-token attention projection FLOPs of one layer (forward multiply-adds x 2 x 3).
double attention_linear_flops(const ModelSpec& m) {
  const double h = d(m.hidden_size), a = d(m.num_attention_heads);
  if (m.mla) {
    const MlaSpec& l = *m.mla;
    const double qk = d(l.qk_nope_head_dim + l.qk_rope_head_dim);
    const double q_term = l.q_lora_rank > 0 ? d(l.q_lora_rank) * (h + a * qk + 1.0) : h * a * qk;
    return 6.0 * (q_term + d(l.kv_lora_rank) * (h + a * d(l.qk_nope_head_dim + l.v_head_dim) + 1.0) +
                  h * d(l.qk_rope_head_dim) + a * d(l.v_head_dim) * h);
  }
  const double q = a * d(m.head_dim);
  return 6.0 * (h * (q + 2.0 * d(m.head_dim) * d(m.num_kv_heads)) + q * h);
}

// Per (token x attended token) core-attention FLOPs of one layer, causal halved.
double core_attention_flops(const ModelSpec& m) {
  const double a = d(m.num_attention_heads);
  if (m.mla) {
    const MlaSpec& l = *m.mla;
    return 6.0 * (a * d(l.qk_nope_head_dim + l.qk_rope_head_dim) / 2.0 + a * d(l.v_head_dim) / 2.0);
  }
  return 6.0 * a * d(m.head_dim);
}

// Per-token MLP FLOPs (2 per multiply-add, x3 for forward and backward) of one dense
// or MoE layer: the routed experts a token visits plus the shared experts.
double mlp_flops_per_token(const ModelSpec& m, bool moe_layer, double routed_fraction = 1.0) {
  const double glu = gated_activation(m.activation) ? 3.0 : 2.0;
  const double width = moe_layer ? d(m.moe->expert_ffn_hidden_size) * d(m.moe->top_k) * routed_fraction +
                                       d(m.moe->shared_expert_ffn_hidden_size)
                                 : d(m.ffn_hidden_size);
  return 2.0 * 3.0 * d(m.hidden_size) * glu * width;
}

double megatron_flops(const ModelSpec& m, int64_t seq_len, double sequences, double routed) {
  const double h = d(m.hidden_size);
  const double moe_layers = m.moe ? d(num_moe_layers(m)) : 0.0;
  const double mlp = (d(m.num_layers) - moe_layers) * mlp_flops_per_token(m, false) +
                     (m.moe ? moe_layers * mlp_flops_per_token(m, true, routed) : 0.0);  // all layers
  const double layers = d(m.num_layers);
  const double tokens = sequences * d(seq_len);
  const double logits = 6.0 * h * d(m.vocab_size);
  // Sliding-window layers count the (query, key) pairs they compute, as
  // Megatron-Bridge's FLOPs calculator does for gpt-oss (utils/flop_utils.py,
  // attention_flops_calculator); model/attention_window.h gives the share.
  const double window_layers = d(num_window_layers(m));
  const double attention_layers =
      layers - window_layers + window_layers * window_pair_fraction(m.sliding_window_tokens, seq_len);
  // Multi-token prediction (Megatron-LM training.py num_floating_point_operations,
  // "MTP norms and proj" and the logits of every MTP layer): each MTP layer adds a
  // transformer layer of the last layer's kind, its norms and eh_proj, and one more
  // pass through the output layer.
  const double mtp = d(m.mtp_num_layers);
  double mtp_flops = 0.0;  // per token
  if (m.mtp_num_layers > 0) {
    const double mtp_mlp = mlp_flops_per_token(m, is_moe_layer(m, m.num_layers - 1), routed);
    const double mtp_core = d(seq_len) * core_attention_flops(m) *
                            layer_attention_fraction(m, m.num_layers - 1, seq_len);
    mtp_flops = mtp * (mtp_mlp + attention_linear_flops(m) + mtp_core +
                       6.0 * (3.0 * h + 2.0 * h * h) + logits);
  }
  return tokens * (mlp + attention_linear_flops(m) * layers + logits + mtp_flops) +
         sequences * d(seq_len) * d(seq_len) * core_attention_flops(m) * attention_layers;
}

double megatron_legacy_flops(const ModelSpec& m, int64_t seq_len, double sequences, double routed) {
  const double h = d(m.hidden_size), s = d(seq_len), layers = d(m.num_layers);
  const double a = d(m.num_attention_heads), g = d(m.num_kv_heads);
  const double q_over_h = a * d(m.head_dim) / h;
  const double glu = gated_activation(m.activation) ? 1.5 : 1.0;
  double ffn = d(m.ffn_hidden_size);
  if (m.moe) {
    ffn = d(m.moe->expert_ffn_hidden_size) * d(m.moe->top_k) * routed +
          d(m.moe->shared_expert_ffn_hidden_size);
  }
  return 12.0 * sequences * s * layers * h * h *
         ((1.0 + g / a + s / h) * q_over_h + ffn / h * glu + d(m.vocab_size) / (2.0 * layers * h));
}

}  // namespace

const char* flop_convention_name(FlopConvention convention) {
  switch (convention) {
    case FlopConvention::kMegatron:
      return "megatron: Megatron-LM num_floating_point_operations (2025+), causal attention "
             "halved, recompute not counted";
    case FlopConvention::kMegatronLegacy:
      return "megatron_legacy: Megatron-LM before 2025-03, full (non-causal) attention";
    case FlopConvention::kNarayanan2021:
      return "narayanan2021: 96Bslh^2(1+s/6h+V/16lh), includes full-recompute forward";
    case FlopConvention::kKorthikanti2022:
      return "korthikanti2022: model FLOPs 72BLsh^2(1+s/6h+V/12hL)";
  }
  return "";
}

double computed_routed_fraction(const TrainingSpec& training) {
  const double factor = training.moe.capacity_factor;
  return factor > 0.0 ? std::min(1.0, factor) : 1.0;
}

double model_flops_per_step(const ModelSpec& m, int64_t seq_len, double sequences,
                            FlopConvention convention, double routed_fraction) {
  const double h = d(m.hidden_size), s = d(seq_len), layers = d(m.num_layers);
  const double v = d(m.vocab_size);
  switch (convention) {
    case FlopConvention::kMegatron:
      return megatron_flops(m, seq_len, sequences, routed_fraction);
    case FlopConvention::kMegatronLegacy:
      return megatron_legacy_flops(m, seq_len, sequences, routed_fraction);
    case FlopConvention::kNarayanan2021:
      return 96.0 * sequences * s * layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * layers * h));
    case FlopConvention::kKorthikanti2022:
      return 72.0 * sequences * layers * s * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * h * layers));
  }
  return 0.0;
}

}  // namespace trainsim
