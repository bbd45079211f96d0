// The op sequence of each part of a pipeline chunk: the embedding, one
// transformer layer (GQA or MLA attention; dense MLP or MoE), and the head
// (final norm, output layer, cross-entropy). Execution order follows
// Megatron-Core's TransformerLayer (megatron/core/transformer/
// transformer_layer.py), MoELayer (moe/moe_layer.py: shared experts, router,
// token dispatch, grouped experts, combine) and MLASelfAttention
// (multi_latent_attention.py).
#pragma once

#include "model/op.h"
#include "model/op_factory.h"
#include "model/recompute_flags.h"

namespace trainsim {

void append_embedding_ops(OpList& ops, const OpFactory& factory);
// attention_fraction: share of the causal scores the layer's attention computes.
void append_layer_ops(OpList& ops, const OpFactory& factory, bool moe_layer,
                      const LayerRecompute& recompute, double attention_fraction = 1.0);
// holds_output_weight: false for a tied output layer on a single stage.
void append_head_ops(OpList& ops, const OpFactory& factory, bool holds_output_weight);
// The multi-token-prediction layers on the last stage (Megatron-Core
// multi_token_prediction.py): per layer the embedding lookup of the shifted
// tokens, enorm and hnorm, eh_proj (2h -> h), one transformer layer of the
// last decoder layer's kind (moe_layer, attention_fraction; recomputed as
// `recompute` says: MultiTokenPredictionLayer._checkpointed_forward follows the
// model's recompute settings), and its own final norm, output layer (shared
// weight) and loss. holds_embedding_copy: the stage keeps a copy of the word
// embeddings (param_count.h).
void append_mtp_ops(OpList& ops, const OpFactory& factory, bool moe_layer,
                    double attention_fraction, bool holds_embedding_copy,
                    const LayerRecompute& recompute);

}  // namespace trainsim
