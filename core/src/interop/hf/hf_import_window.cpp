// Sliding-window attention in Hugging Face configs, mapped onto Megatron-LM's
// --window-size W,0 and --window-attn-skip-freq N (trainsim's
// sliding_window_tokens and full_attention_every_n_layers; layer l, 1-based,
// attends fully iff l % N == 0: megatron/core/transformer/utils.py
// is_layer_window_attention). HF's sliding_window W maps to W, as
// Megatron-Bridge's model bridges do (one token of difference at most).
//   Mistral / Mixtral (modeling_mistral.py): every layer uses the window.
//   Gemma-2 (modeling_gemma2.py): layer_idx even is sliding, odd is full: N = 2.
//   layer_types (newer configs: "sliding_attention" / "full_attention" per layer):
//            any pattern with a full layer every N-th layer.
//   Qwen2/Qwen3 (modeling_qwen2.py): only with use_sliding_window, from layer
//            max_window_layers on; expressible when that is 0 (every layer).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "interop/hf/hf_import.h"
#include "input_limits.h"
#include "model/attention_window.h"

namespace trainsim::interop {

using nlohmann::json;

namespace {

// N of a per-layer sliding/full list when it is Megatron's "every N-th layer is
// full" pattern (0: every layer sliding); nullopt for any other pattern.
std::optional<int64_t> full_every_n(const std::vector<bool>& sliding) {
  int64_t n = 0;
  for (size_t i = 0; i < sliding.size(); ++i) {
    if (!sliding[i]) {
      n = static_cast<int64_t>(i) + 1;
      break;
    }
  }
  ModelSpec pattern;  // the layers Megatron would window with this n
  pattern.sliding_window_tokens = 1;
  pattern.full_attention_every_n_layers = n;
  for (size_t i = 0; i < sliding.size(); ++i) {
    if (sliding[i] != is_window_layer(pattern, static_cast<int64_t>(i))) return std::nullopt;
  }
  return n;
}

}  // namespace

void read_hf_sliding_window(HfReader& r, std::string_view model_type, json& m) {
  const bool qwen = model_type.rfind("qwen", 0) == 0;
  std::optional<int64_t> window;
  for (const char* key : {"sliding_window", "sliding_window_size"}) {
    const std::optional<int64_t> value =
        r.integer(key, 1, kMaxSeqLen);  // read both: both are known
    if (!window) window = value;
  }
  if (qwen) {
    const int64_t first = r.integer("max_window_layers", 0, kMaxLayers).value_or(0);
    if (!r.boolean("use_sliding_window").value_or(false) || !window) return;
    if (first > 0 && first < m.value("num_layers", int64_t{0})) {
      r.note("use_sliding_window: only layers from max_window_layers " + std::to_string(first) +
             " on use the window, a pattern trainsim does not express (full causal attention is "
             "estimated)");
      return;
    }
    if (first > 0) return;  // no layer reaches max_window_layers
    m["sliding_window_tokens"] = *window;
    return;
  }
  std::optional<int64_t> every_n = 0;
  if (const json* types = r.get("layer_types"); types != nullptr) {
    std::vector<bool> sliding;
    bool readable = types->is_array();
    for (const json& type : readable ? *types : json::array()) {
      readable = readable && type.is_string();
      if (readable) sliding.push_back(type.get<std::string>().find("sliding") != std::string::npos);
    }
    if (!readable) {
      r.note("layer_types is not a list of strings: full causal attention is estimated");
      return;
    }
    if (std::find(sliding.begin(), sliding.end(), true) == sliding.end()) return;
    every_n = full_every_n(sliding);
    if (!every_n) {
      r.note(
          "layer_types: this mix of sliding-window and full layers is not a full layer every "
          "n-th layer, which is what trainsim expresses (full causal attention is estimated)");
      return;
    }
  } else if (model_type == "gemma2") {
    every_n = 2;
  }
  if (!window) {
    if (r.get("layer_types") != nullptr) {
      r.note(
          "layer_types names sliding-window layers but sliding_window is absent (full causal "
          "attention is estimated)");
    }
    return;
  }
  m["sliding_window_tokens"] = *window;
  if (*every_n > 0) m["full_attention_every_n_layers"] = *every_n;
}

}  // namespace trainsim::interop
