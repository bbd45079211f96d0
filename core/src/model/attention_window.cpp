#include "model/attention_window.h"

namespace trainsim {

bool is_window_layer(const ModelSpec& model, int64_t layer_index) {
  if (model.sliding_window_tokens <= 0) return false;
  if (model.full_attention_every_n_layers <= 0) return true;
  return (layer_index + 1) % model.full_attention_every_n_layers != 0;
}

int64_t num_window_layers(const ModelSpec& model) {
  if (model.sliding_window_tokens <= 0) return 0;
  const int64_t n = model.full_attention_every_n_layers;
  return n <= 0 ? model.num_layers : model.num_layers - model.num_layers / n;
}

double window_pair_fraction(int64_t window_tokens, int64_t seq_len) {
  if (window_tokens <= 0 || seq_len <= 0 || window_tokens >= seq_len - 1) return 1.0;
  const double w = static_cast<double>(window_tokens), s = static_cast<double>(seq_len);
  const double window_pairs = w * (w + 1.0) / 2.0 + (s - w) * (w + 1.0);
  const double causal_pairs = s * (s + 1.0) / 2.0;
  return window_pairs / causal_pairs;
}

double layer_attention_fraction(const ModelSpec& model, int64_t layer_index, int64_t seq_len) {
  return is_window_layer(model, layer_index)
             ? window_pair_fraction(model.sliding_window_tokens, seq_len)
             : 1.0;
}

}  // namespace trainsim
