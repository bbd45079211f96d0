// Sliding-window attention in Hugging Face configs, applied only where the
// family's transformers code applies it, and mapped onto Megatron-LM's
// --window-size W,0 and --window-attn-skip-freq N (trainsim's
// sliding_window_tokens and full_attention_every_n_layers; layer l, 1-based,
// attends fully iff l % N == 0: megatron/core/transformer/utils.py
// is_layer_window_attention). HF's sliding_window W maps to W, as
// Megatron-Bridge's model bridges do (one token of difference at most).
//   Llama, Gemma, DeepSeek-V2/V3: no sliding window in the modeling code;
//            a sliding_window key is noted and not applied.
//   Mistral / Mixtral (modeling_mistral.py): every layer uses the window.
//   Qwen2 / Qwen2-MoE / Qwen3 (configuration_qwen2.py __post_init__):
//            sliding_window is nulled unless use_sliding_window; layer_types,
//            when absent, is sliding for layers i >= max_window_layers.
//   Qwen3-MoE (configuration_qwen3_moe.py): use_sliding_window windows every layer.
//   Gemma-2, gpt-oss: layer_types, default sliding for even 0-based layers.
// layer_types is checked as transformers' layer_type_validation does: one
// entry per layer (configuration_utils.py).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "interop/hf/hf_import.h"
#include "input_limits.h"
#include "model/attention_window.h"
#include "schema/json_reader.h"

namespace trainsim::interop {

using nlohmann::json;

namespace {

enum class WindowRule { kNone, kEveryLayer, kQwen, kQwenMoe, kLayerTypes };

struct FamilyWindow {
  const char* model_type;
  WindowRule rule;
  int64_t default_window;  ///< the config class's sliding_window default (0: None)
  const char* config_class;
};

const FamilyWindow kWindows[] = {
    {"mistral", WindowRule::kEveryLayer, 0, "MistralConfig"},
    {"mixtral", WindowRule::kEveryLayer, 0, "MixtralConfig"},
    {"qwen2", WindowRule::kQwen, 0, "Qwen2Config"},
    {"qwen2_moe", WindowRule::kQwen, 0, "Qwen2MoeConfig"},
    {"qwen3", WindowRule::kQwen, 0, "Qwen3Config"},
    {"qwen3_moe", WindowRule::kQwenMoe, 0, "Qwen3MoeConfig"},
    {"gemma2", WindowRule::kLayerTypes, 4096, "Gemma2Config"},
    {"gpt_oss", WindowRule::kLayerTypes, 128, "GptOssConfig"},
};

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

// layer_types as a sliding flag per layer; nullopt when absent or after an issue.
std::optional<std::vector<bool>> read_layer_types(HfReader& r, int64_t num_layers) {
  const json* types = r.get("layer_types");
  if (types == nullptr) return std::nullopt;
  if (!types->is_array()) {
    r.error("layer_types", "expected an array of \"full_attention\" / \"sliding_attention\", got " +
                               schema::describe_json_value(*types));
    return std::nullopt;
  }
  if (static_cast<int64_t>(types->size()) != num_layers) {
    r.error("layer_types", "must have one entry per layer (num_hidden_layers " +
                               std::to_string(num_layers) + "), got " + std::to_string(types->size()));
    return std::nullopt;
  }
  std::vector<bool> sliding;
  for (size_t i = 0; i < types->size(); ++i) {
    const json& type = (*types)[i];
    if (!type.is_string() ||
        (type.get<std::string>() != "full_attention" && type.get<std::string>() != "sliding_attention")) {
      r.error_at("/hf/layer_types/" + std::to_string(i),
                 "expected \"full_attention\" or \"sliding_attention\", got " +
                     schema::describe_json_value(type));
      return std::nullopt;
    }
    sliding.push_back(type.get<std::string>() == "sliding_attention");
  }
  return sliding;
}

// The window size: the key, or the class default (noted).
std::optional<int64_t> read_window(HfReader& r, const FamilyWindow& family) {
  std::optional<int64_t> window = r.integer("sliding_window", 1, kMaxSeqLen);
  // Older Gemma-2 configs also write sliding_window_size (the same window).
  const std::optional<int64_t> alias = r.integer("sliding_window_size", 1, kMaxSeqLen);
  if (!window && !r.present("sliding_window")) window = alias;
  if (!window && !r.present("sliding_window") && family.default_window > 0) {
    r.note(std::string("sliding_window is absent: ") + family.config_class + " default " +
           std::to_string(family.default_window));
    window = family.default_window;
  }
  return window;
}

void apply(HfReader& r, json& m, int64_t window, const std::vector<bool>& sliding,
           const std::string& pattern_note) {
  if (std::find(sliding.begin(), sliding.end(), true) == sliding.end()) return;
  const std::optional<int64_t> every_n = full_every_n(sliding);
  if (!every_n) {
    r.note(pattern_note);
    return;
  }
  m["sliding_window_tokens"] = window;
  if (*every_n > 0) m["full_attention_every_n_layers"] = *every_n;
}

}  // namespace

void read_hf_sliding_window(HfReader& r, std::string_view model_type, json& m) {
  const int64_t num_layers = m.value("num_layers", int64_t{1});
  const FamilyWindow* family = nullptr;
  for (const FamilyWindow& f : kWindows) {
    if (model_type == f.model_type) family = &f;
  }
  if (family == nullptr) {  // the modeling code has no sliding window
    if (const json* window = r.get("sliding_window")) {
      r.note("sliding_window " + window->dump() + " is not applied: transformers' " +
             std::string(model_type) + " models attend over the full causal context");
    }
    return;
  }
  const std::string irregular =
      "layer_types: this mix of sliding-window and full layers is not a full layer every n-th "
      "layer, which is what trainsim expresses (full causal attention is estimated)";
  switch (family->rule) {
    case WindowRule::kNone:
      return;
    case WindowRule::kEveryLayer:
      if (const auto window = read_window(r, *family)) {
        apply(r, m, *window, std::vector<bool>(static_cast<size_t>(num_layers), true), irregular);
      }
      return;
    case WindowRule::kQwenMoe: {
      const auto window = read_window(r, *family);
      r.integer("max_window_layers", 0, kMaxLayers);  // written by older configs; one mask for all layers
      if (r.boolean("use_sliding_window").value_or(false) && window) {
        apply(r, m, *window, std::vector<bool>(static_cast<size_t>(num_layers), true), irregular);
      }
      return;
    }
    case WindowRule::kQwen: {
      const auto window = read_window(r, *family);
      const auto types = read_layer_types(r, num_layers);
      const auto max_window_layers = r.integer("max_window_layers", 0, kMaxLayers);
      if (!r.boolean("use_sliding_window").value_or(false) || !window) return;
      if (types) {
        apply(r, m, *window, *types, irregular);
        return;
      }
      const int64_t first = max_window_layers ? *max_window_layers
                                              : r.integer_or("max_window_layers", 0, kMaxLayers, 28,
                                                             family->config_class);
      std::vector<bool> sliding(static_cast<size_t>(num_layers), false);
      for (int64_t i = first; i < num_layers; ++i) sliding[static_cast<size_t>(i)] = true;
      apply(r, m, *window, sliding,
            "use_sliding_window: only layers from max_window_layers " + std::to_string(first) +
                " on use the window, a pattern trainsim does not express (full causal attention "
                "is estimated)");
      return;
    }
    case WindowRule::kLayerTypes: {
      const auto window = read_window(r, *family);
      auto types = read_layer_types(r, num_layers);
      if (!types && r.get("layer_types") == nullptr) {  // default: even 0-based layers slide
        types = std::vector<bool>(static_cast<size_t>(num_layers));
        for (size_t i = 0; i < types->size(); ++i) (*types)[i] = i % 2 == 0;
      }
      if (types && window) apply(r, m, *window, *types, irregular);
      return;
    }
  }
}

}  // namespace trainsim::interop
