// Sliding-window attention: which layers use the window and how much of the
// causal score matrix a window keeps.
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

/// Whether layer `layer_index` (0-based) attends through the sliding window:
/// Megatron-LM megatron/core/transformer/utils.py is_layer_window_attention
/// (1-based layer_number; with --window-attn-skip-freq N every N-th layer is full).
bool is_window_layer(const ModelSpec& model, int64_t layer_index);

/// Number of layers that use the window.
int64_t num_window_layers(const ModelSpec& model);

/// (query, key) pairs a causal window of `window_tokens` keeps over a sequence of
/// `seq_len` tokens, as a fraction of the full causal pairs: query i attends to
/// keys max(0, i - W) .. i (FlashAttention's window_size (W, 0)), so the pairs are
/// sum_i min(i, W) + 1 = W(W+1)/2 + (s - W)(W + 1) for W < s, against s(s+1)/2.
/// 1 when the window covers the sequence or is 0 (no window).
double window_pair_fraction(int64_t window_tokens, int64_t seq_len);

/// The same fraction for layer `layer_index` (1 for full-attention layers).
double layer_attention_fraction(const ModelSpec& model, int64_t layer_index, int64_t seq_len);

}  // namespace trainsim
