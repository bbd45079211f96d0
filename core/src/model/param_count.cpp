#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

double norm_params(const ModelSpec& m, int64_t width) {
  // RMSNorm has a scale; LayerNorm a scale and a bias.
  return d(width) * (m.norm == Norm::kLayerNorm ? 2.0 : 1.0);
}

// Attention block: projections (TP-sharded) and its input norm (replicated).
ParamCounts attention_params(const ModelSpec& m) {
  ParamCounts p;
  const double h = d(m.hidden_size);
  const double heads = d(m.num_attention_heads);
  p.replicated += norm_params(m, m.hidden_size);
  if (m.mla) {
    // megatron/core/transformer/multi_latent_attention.py: down projections are
    // duplicated over TP, up projections column-parallel, output row-parallel.
    const MlaSpec& a = *m.mla;
    const double qk_dim = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      p.replicated += h * d(a.q_lora_rank) + norm_params(m, a.q_lora_rank);
      p.tp_sharded += d(a.q_lora_rank) * heads * qk_dim;
    } else {
      p.tp_sharded += h * heads * qk_dim;
    }
    p.replicated += h * d(a.kv_lora_rank + a.qk_rope_head_dim) + norm_params(m, a.kv_lora_rank);
    p.tp_sharded += d(a.kv_lora_rank) * heads * d(a.qk_nope_head_dim + a.v_head_dim);
    p.tp_sharded += heads * d(a.v_head_dim) * h;
    if (m.linear_bias) p.replicated += h;
    return p;
  }
  const double q_width = heads * d(m.head_dim);
  const double kv_width = d(m.num_kv_heads) * d(m.head_dim);
  p.tp_sharded += h * (q_width + 2.0 * kv_width) + q_width * h;
  if (m.linear_bias) {
    p.tp_sharded += q_width + 2.0 * kv_width;
    p.replicated += h;  // row-parallel bias is not split
  }
  if (m.qk_layernorm) p.replicated += 2.0 * norm_params(m, m.head_dim);
  return p;
}

// One feed-forward network of width `ffn` (dense MLP, one expert, shared experts).
double mlp_params(const ModelSpec& m, int64_t ffn) {
  const double up = gated_activation(m.activation) ? 2.0 : 1.0;
  double params = d(m.hidden_size) * d(ffn) * (up + 1.0);
  if (m.linear_bias) params += d(ffn) * up + d(m.hidden_size);
  return params;
}

}  // namespace

int64_t padded_vocab_size(const ModelSpec& model, int64_t tp) {
  const int64_t multiple = model.make_vocab_size_divisible_by * tp;
  return (model.vocab_size + multiple - 1) / multiple * multiple;
}

bool is_moe_layer(const ModelSpec& model, int64_t layer_index) {
  if (!model.moe) return false;
  const auto& pattern = model.moe->layer_pattern;
  if (!pattern.empty()) return pattern[static_cast<size_t>(layer_index)] != 0;
  return layer_index >= model.moe->num_dense_layers;
}

int64_t num_moe_layers(const ModelSpec& model) {
  int64_t count = 0;
  for (int64_t i = 0; i < model.num_layers; ++i) count += is_moe_layer(model, i) ? 1 : 0;
  return count;
}

ParamCounts layer_params(const ModelSpec& m, int64_t layer_index) {
  ParamCounts p = attention_params(m);
  p.replicated += norm_params(m, m.hidden_size);  // pre-MLP norm
  if (!is_moe_layer(m, layer_index)) {
    p.tp_sharded += mlp_params(m, m.ffn_hidden_size);
    return p;
  }
  const MoeSpec& moe = *m.moe;
  p.replicated += d(m.hidden_size) * d(moe.num_experts);  // router (moe/router.py)
  p.expert += d(moe.num_experts) * mlp_params(m, moe.expert_ffn_hidden_size);
  if (moe.shared_expert_ffn_hidden_size > 0) {
    p.tp_sharded += mlp_params(m, moe.shared_expert_ffn_hidden_size);
  }
  return p;
}

ParamCounts embedding_params(const ModelSpec& m, int64_t vocab) {
  ParamCounts p;
  p.tp_sharded = d(vocab) * d(m.hidden_size);
  if (m.position_embedding == PositionEmbedding::kLearned) {
    p.replicated = d(m.max_position_embeddings) * d(m.hidden_size);
  }
  return p;
}

ParamCounts output_params(const ModelSpec& m, int64_t vocab, int64_t pp) {
  ParamCounts p;
  p.replicated = norm_params(m, m.hidden_size);
  // Untied models own an output matrix; tied ones with pp > 1 keep a copy of the
  // word embeddings on the last stage (megatron/core/models/common/
  // language_module/language_module.py, setup_embeddings_and_output_layer).
  if (!m.tie_embeddings || pp > 1) p.tp_sharded += d(vocab) * d(m.hidden_size);
  return p;
}

bool mtp_holds_embedding_copy(const ModelSpec& m, int64_t pp) {
  return m.mtp_num_layers > 0 && pp > 1 && !m.tie_embeddings;
}

ParamCounts mtp_params(const ModelSpec& m, int64_t vocab, bool embedding_copy) {
  ParamCounts p;
  if (m.mtp_num_layers <= 0) return p;
  const double h = d(m.hidden_size);
  ParamCounts one = layer_params(m, m.num_layers - 1);
  one.replicated += 3.0 * norm_params(m, m.hidden_size);  // enorm, hnorm, final_layernorm
  one.tp_sharded += 2.0 * h * h;                          // eh_proj
  for (int64_t i = 0; i < m.mtp_num_layers; ++i) p += one;
  if (embedding_copy) p.tp_sharded += d(vocab) * h;
  return p;
}

ParamCounts last_stage_extra_params(const ModelSpec& m, int64_t vocab, int64_t pp) {
  ParamCounts p = output_params(m, vocab, pp);
  p += mtp_params(m, vocab, mtp_holds_embedding_copy(m, pp));
  return p;
}

ParamCounts chunk_extra_params(const ModelSpec& m, const ChunkLayers& chunk, int64_t vocab,
                               int64_t pp) {
  ParamCounts p;
  if (chunk.embedding) p += embedding_params(m, vocab);
  if (chunk.loss) p += output_params(m, vocab, pp);
  if (chunk.mtp_layers > 0) p += mtp_params(m, vocab, mtp_holds_embedding_copy(m, pp));
  return p;
}

RankParams stage_rank_params(const ModelSpec& m, const ParallelSpec& parallel,
                             const PipelineLayout& layout, int64_t stage) {
  ParamCounts counts;
  const int64_t vocab = padded_vocab_size(m, parallel.tp);
  for (const ChunkLayers& chunk : layout[static_cast<size_t>(stage)]) {
    for (int64_t i = 0; i < chunk.num_layers; ++i) counts += layer_params(m, chunk.first_layer + i);
    counts += chunk_extra_params(m, chunk, vocab, parallel.pp);
  }
  RankParams rank;
  rank.dense = counts.tp_sharded / d(parallel.tp) + counts.replicated;
  rank.expert = counts.expert / d(parallel.ep * parallel.etp);
  return rank;
}

double total_params(const ModelSpec& m) {
  ParamCounts counts = embedding_params(m, m.vocab_size);
  for (int64_t i = 0; i < m.num_layers; ++i) counts += layer_params(m, i);
  counts += output_params(m, m.vocab_size, 1);
  counts += mtp_params(m, m.vocab_size, false);
  return counts.total();
}

double active_params(const ModelSpec& m) {
  double total = total_params(m);
  if (!m.moe) return total;
  const int64_t moe_layers =
      num_moe_layers(m) + (is_moe_layer(m, m.num_layers - 1) ? m.mtp_num_layers : 0);
  const double inactive_experts = d(m.moe->num_experts - m.moe->top_k);
  total -= d(moe_layers) * inactive_experts * mlp_params(m, m.moe->expert_ffn_hidden_size);
  return total;
}

}  // namespace trainsim
