// Hugging Face config.json importer: family table, dense-model fields, notes
// for unmodelled features and the allow-list of math-irrelevant keys.
#include "interop/hf/hf_import.h"

#include <algorithm>
#include <limits>

#include "schema/json_reader.h"
#include "schema/spelling.h"
#include "input_limits.h"

namespace trainsim::interop {

using schema::describe_json_value;
using schema::json_pointer_escape;
namespace {

using nlohmann::json;

enum class MoeKind { kDense, kMixtral, kQwenMoe, kQwen2Moe, kDeepseek };

// One transformers model family. kv_default / head_dim_default are the
// config class's __init__ defaults (0: None, i.e. num_attention_heads or
// hidden_size / num_attention_heads).
struct Family {
  const char* model_type;
  const char* architecture;
  const char* config_class;
  MoeKind moe;
  int64_t head_dim_default;
  bool tie_default;
  bool qk_norm;     ///< Qwen3: RMSNorm on each query and key head (q_norm, k_norm)
  bool gated_gelu;  ///< Gemma: GeGLU MLP (gelu_pytorch_tanh on the gate)
  bool qkv_bias;    ///< Qwen2: q/k/v projections carry biases (modeling_qwen2.py)
};

const Family kFamilies[] = {
    {"llama", "LlamaForCausalLM", "LlamaConfig", MoeKind::kDense, 0, false, false, false, false},
    {"mistral", "MistralForCausalLM", "MistralConfig", MoeKind::kDense, 0, false, false, false, false},
    {"mixtral", "MixtralForCausalLM", "MixtralConfig", MoeKind::kMixtral, 0, false, false, false, false},
    {"qwen2", "Qwen2ForCausalLM", "Qwen2Config", MoeKind::kDense, 0, false, false, false, true},
    {"qwen2_moe", "Qwen2MoeForCausalLM", "Qwen2MoeConfig", MoeKind::kQwen2Moe, 0, false, false, false, true},
    {"qwen3", "Qwen3ForCausalLM", "Qwen3Config", MoeKind::kDense, 128, false, true, false, false},
    {"qwen3_moe", "Qwen3MoeForCausalLM", "Qwen3MoeConfig", MoeKind::kQwenMoe, 0, false, true, false, false},
    {"deepseek_v2", "DeepseekV2ForCausalLM", "DeepseekV2Config", MoeKind::kDeepseek, 0, false, false, false, false},
    {"deepseek_v3", "DeepseekV3ForCausalLM", "DeepseekV3Config", MoeKind::kDeepseek, 0, false, false, false, false},
    {"gemma", "GemmaForCausalLM", "GemmaConfig", MoeKind::kDense, 256, true, false, true, false},
    {"gemma2", "Gemma2ForCausalLM", "Gemma2Config", MoeKind::kDense, 256, true, false, true, false},
    {"gpt_oss", "GptOssForCausalLM", "GptOssConfig", MoeKind::kMixtral, 64, false, false, false, false},
};

// Keys that cannot change parameter counts, FLOPs or memory: token ids,
// initialization, numerics, RoPE frequencies, router loss terms, generation
// and bookkeeping fields of PretrainedConfig.
const char* const kIgnored[] = {
    "_name_or_path", "transformers_version", "torch_dtype", "dtype", "bos_token_id",
    "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id", "initializer_range",
    "rms_norm_eps", "layer_norm_eps", "rope_theta", "rope_scaling", "rope_parameters",
    "rope_interleave", "rope_local_base_freq", "use_cache", "max_position_embeddings",
    "pretraining_tp", "output_router_logits", "router_aux_loss_coef", "router_jitter_noise",
    "aux_loss_alpha", "seq_aux", "norm_topk_prob", "routed_scaling_factor", "scoring_func",
    "topk_method", "n_group", "topk_group", "ep_size", "auto_map", "tokenizer_class",
    "query_pre_attn_scalar", "cache_implementation", "return_dict", "output_hidden_states",
    "output_attentions", "torchscript", "use_bfloat16", "pruned_heads", "chunk_size_feed_forward",
    "is_encoder_decoder", "is_decoder", "cross_attention_hidden_size", "add_cross_attention",
    "tie_encoder_decoder", "finetuning_task", "id2label", "label2id", "task_specific_params",
    "problem_type", "prefix", "max_length", "min_length", "do_sample", "early_stopping",
    "num_beams", "num_beam_groups", "diversity_penalty", "temperature", "top_k", "top_p",
    "typical_p", "repetition_penalty", "length_penalty", "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores",
    "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id",
    "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens",
    "begin_suppress_tokens", "tf_legacy_loss", "attn_implementation", "_attn_implementation",
};

std::string supported_list() {
  std::string list;
  for (const Family& f : kFamilies) list += (list.empty() ? "" : ", ") + std::string(f.model_type);
  return list;
}

const Family* find_family(HfReader& r) {
  const auto model_type = r.text("model_type");
  std::string architecture;
  if (const json* archs = r.get("architectures")) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
      r.error("architectures", "expected a non-empty array of class names, got " + describe_json_value(*archs));
      return nullptr;
    }
    architecture = (*archs)[0].get<std::string>();
  }
  for (const Family& f : kFamilies) {
    if (model_type ? *model_type == f.model_type : architecture == f.architecture) {
      if (!model_type) r.note("model_type is missing: \"" + std::string(f.model_type) + "\" from architectures");
      if (!architecture.empty() && architecture != f.architecture) {
        r.note("architectures[0] \"" + architecture + "\" is not " + f.architecture +
               ", the class of model_type \"" + f.model_type + "\"");
      }
      return &f;
    }
  }
  if (model_type) {
    r.error("model_type", "unsupported model_type \"" + *model_type + "\"" +
                              (architecture.empty() ? "" : " (architectures: " + architecture + ")") +
                              "; supported: " + supported_list());
  } else if (r.get("model_type") == nullptr) {
    r.error("model_type", "missing required key" +
                              (architecture.empty() ? ""
                                                    : " (architectures: " + architecture +
                                                          " is not a supported class)") +
                              "; supported: " + supported_list());
  }
  return nullptr;
}

void read_activation(HfReader& r, const Family& f, json& m) {
  const char* key = f.gated_gelu && r.get("hidden_activation") != nullptr ? "hidden_activation" : "hidden_act";
  const std::string fallback = f.gated_gelu ? "gelu_pytorch_tanh" : "silu";
  const auto act = r.text(key);
  if (f.gated_gelu) r.text(key == std::string("hidden_act") ? "hidden_activation" : "hidden_act");
  if (!act) r.note(std::string(key) + " is absent: " + f.config_class + " default \"" + fallback + "\"");
  const std::string name = act.value_or(fallback);
  const bool silu = name == "silu" || name == "swish";
  const bool gelu = name.rfind("gelu", 0) == 0;
  if (f.gated_gelu ? !gelu : !silu) {
    r.error(key, "expected \"" + fallback + "\" (the gated MLP trainsim models), got \"" + name + "\"");
  }
  m["activation"] = f.gated_gelu ? "geglu" : "swiglu";
}

void read_attention(HfReader& r, const Family& f, json& m, int64_t hidden, int64_t heads) {
  const bool mla = f.moe == MoeKind::kDeepseek;
  m["num_kv_heads"] = mla ? heads : r.required("num_key_value_heads", 1, kMaxHeads);
  if (mla) r.integer("num_key_value_heads", 1, kMaxHeads);  // MLA: every head has its own k/v
  if (!mla) {
    int64_t fallback = f.head_dim_default;
    if (fallback == 0 && heads > 0 && hidden % heads == 0) fallback = hidden / heads;
    if (heads == 0) {
      m["head_dim"] = 1;  // hidden_size or num_attention_heads is already reported
    } else if (r.get("head_dim") == nullptr && fallback == 0) {
      r.error("head_dim", "missing required key (hidden_size is not a multiple of num_attention_heads)");
    } else if (r.get("head_dim") == nullptr && f.head_dim_default == 0) {
      m["head_dim"] = fallback;  // None: hidden_size / num_attention_heads
    } else {
      m["head_dim"] = r.integer_or("head_dim", 1, kMaxWidth, fallback, f.config_class);
    }
  }
  const bool attention_bias = r.boolean("attention_bias").value_or(false);
  // gpt-oss experts always carry biases (modeling_gpt_oss.py GptOssExperts).
  const bool gpt_oss = std::string(f.model_type) == "gpt_oss";
  const bool mlp_bias = gpt_oss || r.boolean("mlp_bias").value_or(false);
  m["linear_bias"] = attention_bias && mlp_bias;
  if (attention_bias != mlp_bias) {
    r.note(std::string(attention_bias ? "attention_bias" : "mlp_bias") +
           ": biases on only some linear layers are not modelled (linear_bias false)");
  }
  if (f.qkv_bias) r.note("the q/k/v projection biases of " + std::string(f.config_class) + " are not modelled");
  m["qk_layernorm"] = f.qk_norm;
  if (r.number("attention_dropout").value_or(0.0) > 0.0) {
    r.note("attention_dropout: dropout is not modelled (trainsim assumes none)");
  }
}

// Features that change the estimate but that trainsim does not model.
void note_unmodelled(HfReader& r, const Family& f) {
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    if (const json* cap = r.get(key)) r.note(std::string(key) + " " + cap->dump() + ": soft-capping is not modelled");
  }
  if (std::string(f.model_type) == "gemma2") {
    r.note("Gemma-2's post-attention and post-feedforward norms are not modelled");
  }
  if (std::string(f.model_type) == "gpt_oss") {
    r.integer("experts_per_token", 1, kMaxExperts);  // the same as num_experts_per_tok
    r.integer("initial_context_length", 1, kMaxSeqLen);
    r.note("gpt-oss attention sinks (a learnable logit per head) are not modelled");
    if (const auto limit = r.number("swiglu_limit")) {
      r.note("swiglu_limit " + schema::format_number(*limit, 6) +
             ": the clamped SwiGLU is priced as a fused SwiGLU");
    }
  }
  if (r.get("quantization_config") != nullptr) {
    r.note("quantization_config: the checkpoint is quantized; training is estimated in the training dtype");
  }
}

json read_model(HfReader& r, const Family& f, const json& document) {
  json m = json::object();
  if (const auto path = r.text("_name_or_path"); path && !path->empty()) {
    m["name"] = *path;
  } else {
    m["name"] = document.contains("architectures") && document["architectures"].is_array() &&
                        !document["architectures"].empty() && document["architectures"][0].is_string()
                    ? document["architectures"][0].get<std::string>()
                    : std::string(f.model_type);
  }
  const size_t issues_before = r.issue_count();
  const int64_t hidden = r.required("hidden_size", 1, kMaxWidth);
  const int64_t heads = r.required("num_attention_heads", 1, kMaxHeads);
  const bool sizes_valid = r.issue_count() == issues_before;
  m["num_layers"] = r.required("num_hidden_layers", 1, kMaxLayers);
  m["hidden_size"] = hidden;
  m["num_attention_heads"] = heads;
  m["ffn_hidden_size"] = r.required("intermediate_size", 1, kMaxWidth);
  m["vocab_size"] = r.required("vocab_size", 1, kMaxVocab);
  read_activation(r, f, m);
  m["norm"] = "rmsnorm";
  m["position_embedding"] = "rope";
  const auto tie = r.boolean("tie_word_embeddings");
  if (!tie && r.get("tie_word_embeddings") == nullptr) {
    r.note(std::string("tie_word_embeddings is absent: ") + f.config_class + " default " +
           (f.tie_default ? "true" : "false"));
  }
  m["tie_embeddings"] = tie.value_or(f.tie_default);
  read_attention(r, f, m, sizes_valid ? hidden : 0, sizes_valid ? heads : 0);
  switch (f.moe) {
    case MoeKind::kMixtral: read_hf_mixtral(r, m); break;
    case MoeKind::kQwenMoe: read_hf_qwen_moe(r, m, false); break;
    case MoeKind::kQwen2Moe: read_hf_qwen_moe(r, m, true); break;
    case MoeKind::kDeepseek: read_hf_deepseek(r, m); break;
    case MoeKind::kDense: break;
  }
  read_hf_sliding_window(r, f.model_type, m);
  // DeepSeek-V3's multi-token-prediction modules (modeling_deepseek.py does not
  // build them; the checkpoint carries them as layers num_hidden_layers..).
  if (const auto mtp = r.integer("num_nextn_predict_layers", 0, kMaxMtpLayers); mtp && *mtp > 0) {
    m["mtp_num_layers"] = *mtp;
  }
  note_unmodelled(r, f);
  return m;
}

}  // namespace

json import_hf(std::string_view text, Issues& issues) {
  json document;
  if (!schema::parse_document(text, "/hf", document, issues)) return nullptr;
  if (!document.is_object()) {
    issues.push_back({"/hf", "expected object, got " + describe_json_value(document)});
    return nullptr;
  }
  std::vector<std::string> notes;
  HfReader r(document, issues, notes);
  const Family* family = find_family(r);
  if (family == nullptr) return nullptr;
  json model = read_model(r, *family, document);
  if (issues.empty()) check_hf_model(model, document, issues);
  for (const char* key : kIgnored) r.get(key);
  for (const std::string& key : r.unread_keys()) {
    const std::string meant = r.likely_key(key);
    if (meant.empty()) {
      notes.push_back("ignored field \"" + key + "\" (not used by " + family->config_class + " models in trainsim)");
      continue;
    }
    notes.push_back("ignored field \"" + key + "\" (not a " + family->config_class + " field trainsim knows: did you mean \"" +
                    meant + "\"?)");
    // A failed import drops the notes: the error about the key it meant says it too.
    if (!r.present(meant.c_str())) {
      for (Issue& issue : issues) {
        if (issue.path == "/hf/" + json_pointer_escape(meant)) {
          issue.message += " (the file has \"" + key + "\": a typo of \"" + meant + "\"?)";
        }
      }
    }
  }
  if (!issues.empty()) return nullptr;
  return {{"model", model}, {"notes", notes}};
}

const json* HfReader::get(const char* key) {
  read_.insert(key);
  const auto it = object_.find(key);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

void HfReader::error(const char* key, const std::string& message) {
  issues_.push_back({"/hf/" + json_pointer_escape(key), message});
}

std::optional<int64_t> HfReader::integer(const char* key, int64_t min_value, int64_t max_value) {
  const json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) {
    error(key, "expected integer, got " + describe_json_value(*value));
    return std::nullopt;
  }
  if (value->is_number_unsigned() &&
      value->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    error(key, "must be at most " + std::to_string(max_value) + ", got " + value->dump());
    return std::nullopt;
  }
  const int64_t result = value->get<int64_t>();
  if (result < min_value || result > max_value) {
    error(key, (result < min_value ? "must be at least " + std::to_string(min_value)
                                   : "must be at most " + std::to_string(max_value)) +
                   ", got " + std::to_string(result));
    return std::nullopt;
  }
  return result;
}

int64_t HfReader::required(const char* key, int64_t min_value, int64_t max_value) {
  if (get(key) == nullptr) {
    error(key, object_.contains(key) ? "expected integer, got null" : "missing required key");
    return min_value;
  }
  return integer(key, min_value, max_value).value_or(min_value);
}

int64_t HfReader::integer_or(const char* key, int64_t min_value, int64_t max_value,
                             int64_t fallback, const char* config_class) {
  if (get(key) == nullptr) {
    note(std::string(key) + " is absent: " + config_class + " default " + std::to_string(fallback));
    return fallback;
  }
  return integer(key, min_value, max_value).value_or(fallback);
}

std::optional<bool> HfReader::boolean(const char* key) {
  const json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    error(key, "expected boolean, got " + describe_json_value(*value));
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<double> HfReader::number(const char* key) {
  const json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) {
    error(key, "expected number, got " + describe_json_value(*value));
    return std::nullopt;
  }
  return value->get<double>();
}

std::optional<std::string> HfReader::text(const char* key) {
  const json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    error(key, "expected string, got " + describe_json_value(*value));
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::string HfReader::likely_key(const std::string& key) const {
  return schema::likely_name(key, std::vector<std::string>(read_.begin(), read_.end()));
}

std::vector<std::string> HfReader::unread_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object_.items()) {
    if (read_.count(key) == 0) keys.push_back(key);
  }
  return keys;
}

}  // namespace trainsim::interop
