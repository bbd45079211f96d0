// Hugging Face config.json -> trainsim "model" object. Field meanings and
// class defaults follow the transformers configuration classes (LlamaConfig,
// MistralConfig, MixtralConfig, Qwen2Config, Qwen2MoeConfig, Qwen3Config,
// Qwen3MoeConfig, DeepseekV2Config, DeepseekV3Config, GemmaConfig,
// Gemma2Config) and their modeling_*.py layer rules.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/issue.h"

namespace trainsim::interop {

// {"model": {...}, "notes": [...]} or null with issues at paths "/hf/<key>".
// Fields that change the estimate but are not modelled (sliding-window patterns
// other than a full layer every n-th, multi-token prediction, soft-capping...)
// become notes; fields outside an explicit allow-list of math-irrelevant keys
// are noted as ignored.
nlohmann::json import_hf(std::string_view text, Issues& issues);

// Typed access to one config.json object; null counts as absent (transformers
// writes None as null). Remembers the keys it was asked for.
class HfReader {
 public:
  HfReader(const nlohmann::json& object, Issues& issues, std::vector<std::string>& notes)
      : object_(object), issues_(issues), notes_(notes) {}

  const nlohmann::json* get(const char* key);  ///< null when absent or null
  bool present(const char* key) const { return object_.contains(key); }  ///< even if null
  std::optional<int64_t> integer(const char* key, int64_t min_value, int64_t max_value);
  int64_t required(const char* key, int64_t min_value, int64_t max_value);
  // An integer with the config class's default when absent (noted).
  int64_t integer_or(const char* key, int64_t min_value, int64_t max_value, int64_t fallback,
                     const char* config_class);
  std::optional<bool> boolean(const char* key);
  std::optional<double> number(const char* key);
  std::optional<std::string> text(const char* key);
  void error(const char* key, const std::string& message);
  void error_at(const std::string& path, const std::string& message) { issues_.push_back({path, message}); }
  void note(const std::string& message) { notes_.push_back(message); }
  size_t issue_count() const { return issues_.size(); }
  std::vector<std::string> unread_keys() const;
  // The key asked for (and so known to this family) that an unread `key` most
  // likely misspells, or "" (schema::likely_name).
  std::string likely_key(const std::string& key) const;

 private:
  const nlohmann::json& object_;
  Issues& issues_;
  std::vector<std::string>& notes_;
  std::set<std::string> read_;
};

// Mixture-of-experts fields (hf_import_moe.cpp): sets model["moe"] (and
// ffn sizes) for the Mixtral, Qwen-MoE and DeepSeek families.
void read_hf_mixtral(HfReader& r, nlohmann::json& model);
void read_hf_qwen_moe(HfReader& r, nlohmann::json& model, bool shared_expert);
void read_hf_deepseek(HfReader& r, nlohmann::json& model);
// Rules estimate would reject in the imported model (hf_import_check.cpp),
// reported at the config.json key that set the value ("/hf/num_key_value_heads").
void check_hf_model(const nlohmann::json& model, const nlohmann::json& document, Issues& issues);

// Sliding-window attention (hf_import_window.cpp): sets sliding_window_tokens and
// full_attention_every_n_layers where the family's layer pattern is one trainsim
// expresses, a note otherwise.
void read_hf_sliding_window(HfReader& r, std::string_view model_type, nlohmann::json& model);

}  // namespace trainsim::interop
