// Parameter counts per layer kind and per pipeline stage, following
// Megatron-Core's module shapes (megatron/core/transformer/attention.py,
// multi_latent_attention.py, mlp.py, moe/experts.py, moe/router.py,
// models/common/embeddings/language_model_embedding.py) and the bucket split of
// megatron/training/theoretical_memory_usage.py (TP-sharded, replicated,
// expert-sharded).
#pragma once

#include <cstdint>

#include "model/pipeline_layout.h"
#include "trainsim/spec.h"

namespace trainsim {

// Megatron's vocabulary padding: round up to make_vocab_size_divisible_by * tp
// (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding).
int64_t padded_vocab_size(const ModelSpec& model, int64_t tp);

// Gated (GLU) activations have two up projections (swiglu, geglu).
inline bool gated_activation(Activation a) { return a == Activation::kSwiglu || a == Activation::kGeglu; }

bool is_moe_layer(const ModelSpec& model, int64_t layer_index);
int64_t num_moe_layers(const ModelSpec& model);

// Parameter elements, split by how Megatron shards them.
struct ParamCounts {
  double tp_sharded = 0.0;  ///< split over tp (QKV, projections, dense MLP, shared experts, vocab)
  double replicated = 0.0;  ///< same on every tp rank (norms, router, MLA down projections)
  double expert = 0.0;      ///< routed experts, split over ep * etp
  double total() const { return tp_sharded + replicated + expert; }
  ParamCounts& operator+=(const ParamCounts& other) {
    tp_sharded += other.tp_sharded;
    replicated += other.replicated;
    expert += other.expert;
    return *this;
  }
};

// Unsharded counts of one transformer layer (index decides dense vs MoE).
ParamCounts layer_params(const ModelSpec& model, int64_t layer_index);
// Word embeddings (plus learned positions) with the given vocabulary size.
ParamCounts embedding_params(const ModelSpec& model, int64_t vocab);
// Output projection (untied) or 0 (tied with pp == 1), plus the final norm.
ParamCounts output_params(const ModelSpec& model, int64_t vocab, int64_t pp);

// Multi-token prediction modules (megatron/core/transformer/multi_token_prediction.py,
// MultiTokenPredictionLayer): per MTP layer enorm, hnorm, eh_proj (2h -> h, column
// parallel), a transformer layer of the last decoder layer's kind and its final norm;
// embedding and output layer are shared. `embedding_copy`: the last stage of a
// pipeline also holds the word embeddings (GPTModel builds the embedding where
// mtp_process), unless they are tied and already there.
ParamCounts mtp_params(const ModelSpec& model, int64_t vocab, bool embedding_copy);
// Whether the last stage keeps an MTP copy of the word embeddings.
bool mtp_holds_embedding_copy(const ModelSpec& model, int64_t pp);
// What the last pipeline stage holds besides its layers: the output layer and
// final norm, and the MTP layers (with their embedding copy).
ParamCounts last_stage_extra_params(const ModelSpec& model, int64_t vocab, int64_t pp);

// What a chunk holds besides its decoder layers: the embedding, the output
// layer and final norm (loss), the MTP layers (with their embedding copy).
ParamCounts chunk_extra_params(const ModelSpec& model, const ChunkLayers& chunk, int64_t vocab,
                               int64_t pp);

// Parameters held by one GPU of a stage: (dense elements, expert elements).
struct RankParams {
  double dense = 0.0;
  double expert = 0.0;
};
RankParams stage_rank_params(const ModelSpec& model, const ParallelSpec& parallel,
                             const PipelineLayout& layout, int64_t stage);

// Whole-model totals (unpadded vocabulary, as models are usually quoted).
double total_params(const ModelSpec& model);
double active_params(const ModelSpec& model);

}  // namespace trainsim
