// The "model" section from Megatron-LM flags. Defaults are Megatron-LM's
// (arguments.py at core_v0.14.0: _add_network_size_args, _add_moe_args,
// _add_mla_args, validate_args), each applied with a note.
#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

#include "input_limits.h"
#include "interop/megatron/megatron_import.h"

namespace trainsim::interop {
namespace {

using nlohmann::json;

std::string str(int64_t value) { return std::to_string(value); }

int64_t int_or_default(FlagReader& r, const char* name, int64_t min_value, int64_t max_value,
                       int64_t fallback, const std::string& why) {
  if (r.has(name)) return r.integer(name, min_value, max_value).value_or(fallback);
  r.note(std::string(name) + " is not given: " + why + " " + str(fallback));
  return fallback;
}

bool read_activation(FlagReader& r, json& m) {
  const bool swiglu = r.flag("--swiglu");
  const bool squared_relu = r.flag("--squared-relu");
  // validate_args: "--squared-relu" asserts that --swiglu is not set.
  if (squared_relu && swiglu) r.error("--squared-relu", "cannot be combined with --swiglu");
  r.flag("--openai-gelu");  // a GeLU approximation: same shapes and cost
  m["activation"] = swiglu ? "swiglu" : (squared_relu ? "squared_relu" : "gelu");
  return swiglu;
}

// validate_args: ffn_hidden_size = int((4 * h * 2 / 3) / 64) * 64 with --swiglu, else 4 * h.
int64_t read_ffn(FlagReader& r, int64_t hidden, bool swiglu) {
  const int64_t fallback = swiglu ? static_cast<int64_t>((4.0 * static_cast<double>(hidden) * 2.0 /
                                                          3.0) / 64.0) * 64
                                  : 4 * hidden;
  const char* name = "--ffn-hidden-size";
  if (!r.has(name) && fallback < 1) {
    r.error(name, "missing required flag (Megatron-LM's default for hidden size " + str(hidden) +
                      " is 0)");
    return 1;
  }
  return int_or_default(r, name, 1, kMaxWidth, fallback,
                        "Megatron-LM's default (4*hidden_size, or 8/3*hidden_size rounded down to "
                        "a multiple of 64 with --swiglu) is");
}

void read_mla(FlagReader& r, json& m) {
  const char* why = "Megatron-LM's default is";
  json mla = json::object();
  mla["q_lora_rank"] = r.integer("--q-lora-rank", 1, kMaxWidth).value_or(0);  // None: no q LoRA
  mla["kv_lora_rank"] = int_or_default(r, "--kv-lora-rank", 1, kMaxWidth, 32, why);
  mla["qk_nope_head_dim"] = int_or_default(r, "--qk-head-dim", 1, kMaxWidth, 128, why);
  mla["qk_rope_head_dim"] = int_or_default(r, "--qk-pos-emb-head-dim", 1, kMaxWidth, 64, why);
  mla["v_head_dim"] = int_or_default(r, "--v-head-dim", 1, kMaxWidth, 128, why);
  m["mla"] = mla;
}

void read_attention(FlagReader& r, json& m, int64_t hidden, int64_t heads) {
  const bool mla = r.flag("--multi-latent-attention");
  int64_t kv_heads = heads;
  if (r.flag("--group-query-attention")) {
    kv_heads = int_or_default(r, "--num-query-groups", 1, kMaxHeads, 1,
                              "with --group-query-attention Megatron-LM's default is");
  }
  int64_t head_dim = 0;
  if (mla) {
    read_mla(r, m);
    head_dim = m["mla"]["qk_nope_head_dim"].get<int64_t>() +
               m["mla"]["qk_rope_head_dim"].get<int64_t>();
  } else if (hidden % heads == 0) {
    head_dim = hidden / heads;
  } else if (!r.has("--kv-channels")) {
    r.error("--kv-channels", "missing required flag (hidden size " + str(hidden) +
                                 " is not a multiple of " + str(heads) + " attention heads)");
  }
  if (r.has("--kv-channels")) head_dim = r.integer("--kv-channels", 1, kMaxWidth).value_or(1);
  m["num_kv_heads"] = kv_heads;
  m["head_dim"] = head_dim > 0 ? head_dim : 1;
}

void read_position_embedding(FlagReader& r, json& m) {
  const char* name = "--position-embedding-type";
  const bool rotary = r.flag("--use-rotary-position-embeddings");
  std::string kind = rotary ? "rope" : "learned";
  if (r.has(name)) {
    const auto type = r.choice(name, {"learned_absolute", "rope", "mrope", "yarn", "relative", "none"});
    if (type && *type >= 4) {
      r.error(name, "\"" + std::string(*type == 4 ? "relative" : "none") +
                        "\" is not supported (trainsim models rope and learned_absolute)");
    } else if (type) {
      kind = *type == 0 ? "learned" : "rope";
      if (*type >= 2) r.note(std::string(name) + " " + (*type == 2 ? "mrope" : "yarn") +
                             " is modelled as rope (same shapes and cost)");
    }
  } else if (!rotary) {
    r.note(std::string(name) + " is not given: Megatron-LM's default is learned_absolute");
  }
  m["position_embedding"] = kind;
  if (r.flag("--no-position-embedding") && kind == "learned") {
    r.error("--no-position-embedding", "not supported (trainsim models rope and learned_absolute)");
  }
  const auto max_positions = r.integer("--max-position-embeddings", 1, kMaxSeqLen);
  if (kind == "learned" && max_positions) m["max_position_embeddings"] = *max_positions;
  if (kind == "learned" && !r.has("--max-position-embeddings")) {
    r.error("--max-position-embeddings", "missing required flag (learned position embeddings)");
  }
}

// Tokenizers whose vocabulary size (len(tokenizer), before Megatron's padding)
// is unambiguous from the model name alone.
int64_t known_tokenizer_vocab(const std::string& model) {
  std::string lower;
  for (char c : model) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* llama3 : {"meta-llama-3", "llama-3.1", "llama-3.2", "llama-3.3"}) {
    if (lower.find(llama3) != std::string::npos) return 128256;  // tiktoken 128000 + 256 special
  }
  for (const char* spm32k : {"llama-2-", "mistral-7b-v0.1", "mixtral-8x7b"}) {
    if (lower.find(spm32k) != std::string::npos) return 32000;
  }
  return 0;
}

// megatron/training/tokenizer/tokenizer.py build_tokenizer: the model's
// vocabulary is the tokenizer's size, padded (_vocab_size_with_padding).
void read_vocab(FlagReader& r, json& m) {
  if (r.has("--make-vocab-size-divisible-by")) {
    m["make_vocab_size_divisible_by"] = r.integer("--make-vocab-size-divisible-by", 1, 1 << 20).value_or(128);
  }
  const auto type = r.text("--tokenizer-type");
  const auto model = r.text_if_resolved("--tokenizer-model");  // a path, often from $1
  const auto size = r.integer("--vocab-size", 0, kMaxVocab);
  if (r.has("--padded-vocab-size")) {
    m["vocab_size"] = r.integer("--padded-vocab-size", 1, kMaxVocab).value_or(1);
    m["make_vocab_size_divisible_by"] = 1;
    r.note("--padded-vocab-size is used as the vocabulary size, without further padding");
    return;
  }
  const std::string tokenizer = type.value_or("");
  if (tokenizer == "NullTokenizer") {
    if (!size && !r.has("--vocab-size")) {
      r.error("--vocab-size", "missing required flag (--tokenizer-type NullTokenizer)");
    }
    m["vocab_size"] = size.value_or(0) + 1;
    r.note("NullTokenizer: vocabulary of --vocab-size + 1 (the end-of-document token) = " +
           str(size.value_or(0) + 1));
    return;
  }
  if (tokenizer == "GPT2BPETokenizer") {
    m["vocab_size"] = 50257;  // GPT-2 BPE vocab.json
    return;
  }
  if (size && *size == 0) {
    r.error("--vocab-size", "must be at least 1, got 0");
    return;
  }
  if (size) {
    m["vocab_size"] = *size;
    r.note("the vocabulary size is taken from --vocab-size " + str(*size) +
           " (Megatron-LM reads it from the tokenizer; it must be the size before padding)");
    return;
  }
  if (const int64_t known = known_tokenizer_vocab(model.value_or("")); known > 0) {
    m["vocab_size"] = known;
    r.note("vocabulary size " + str(known) + " of tokenizer \"" + *model + "\"");
    return;
  }
  if (!r.has("--vocab-size")) {
    r.error("--vocab-size", tokenizer.empty()
                                ? "missing required flag (no --tokenizer-type to take it from)"
                                : "missing required flag (the vocabulary size of tokenizer " +
                                      tokenizer + (model ? " \"" + *model + "\"" : "") +
                                      " is not known; give its size before padding)");
  }
}

void read_moe(FlagReader& r, json& m, int64_t num_layers, int64_t ffn) {
  const auto experts = r.integer("--num-experts", 0, kMaxExperts);
  if (!experts || *experts == 0) return;  // validate_args: num_experts 0 means no MoE
  const char* why = "Megatron-LM's default is";
  json moe = {{"num_experts", *experts}};
  moe["top_k"] = int_or_default(r, "--moe-router-topk", 1, kMaxExperts, 2, why);
  moe["expert_ffn_hidden_size"] = int_or_default(r, "--moe-ffn-hidden-size", 1, kMaxWidth, ffn,
                                                 "Megatron-LM uses --ffn-hidden-size");
  moe["shared_expert_ffn_hidden_size"] =
      r.integer("--moe-shared-expert-intermediate-size", 1, kMaxWidth).value_or(0);
  read_moe_layer_freq(r, num_layers, moe);
  // Group-limited routing (transformer_config.py moe_router_num_groups / moe_router_group_topk).
  if (const auto groups = r.integer("--moe-router-num-groups", 1, kMaxExperts)) moe["router_num_groups"] = *groups;
  if (const auto topk = r.integer("--moe-router-group-topk", 1, kMaxExperts)) moe["router_group_topk"] = *topk;
  m["moe"] = moe;
}

// --window-size "W,0" (arguments.py tuple_type; -1 = unbounded) and
// --window-attn-skip-freq N (every N-th layer full; megatron/core/transformer/
// utils.py is_layer_window_attention). A list pattern for the skip frequency is
// not expressible.
void read_window(FlagReader& r, json& m, int64_t num_layers) {
  const auto text = r.text("--window-size");
  if (!text) return;
  std::string cleaned;
  for (const char c : *text) {
    if (c != '(' && c != ')' && c != ' ') cleaned += c;
  }
  // Both halves must be whole integers (as FlagReader::integer reads them).
  auto whole = [](std::string_view part, int64_t& value) {
    if (part.size() > 1 && part[0] == '+') part.remove_prefix(1);  // Python's int() takes "+128"
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    return error == std::errc() && end == part.data() + part.size();
  };
  const size_t comma = cleaned.find(',');
  int64_t left = 0, right = 0;
  const bool parsed = comma != std::string::npos &&
                      whole(std::string_view(cleaned).substr(0, comma), left) &&
                      whole(std::string_view(cleaned).substr(comma + 1), right);
  if (!parsed || left < -1 || right < -1 || left > kMaxSeqLen) {
    r.error("--window-size", "expected \"LEFT,RIGHT\" such as \"4096,0\" (-1 = unbounded), got \"" +
                                 *text + "\"");
    return;
  }
  if (left == -1) return;  // unbounded on the left: full causal attention
  if (right != 0) {
    r.error("--window-size", "only causal windows \"W,0\" are modelled, got \"" + *text + "\"");
    return;
  }
  if (left == 0) {
    r.error("--window-size", "a window of 0 tokens attends to nothing but itself; expected W >= 1");
    return;
  }
  m["sliding_window_tokens"] = left;
  const auto skip = r.text("--window-attn-skip-freq");
  if (!skip) return;
  if (skip->find('[') != std::string::npos) {
    r.error("--window-attn-skip-freq", "list patterns are not modelled; expected N (every N-th "
                                       "layer attends fully), got \"" + *skip + "\"");
    return;
  }
  if (const auto every = r.integer("--window-attn-skip-freq", 1, std::max<int64_t>(num_layers, 1))) {
    m["full_attention_every_n_layers"] = *every;
  }
}

void note_unmodelled(FlagReader& r) {
  // The dropout values themselves are read with the training flags
  // (megatron_import.cpp); their mask kernels are priced, their effect on
  // convergence is not.
  for (const char* name : {"--attention-dropout", "--hidden-dropout"}) {
    if (!r.has(name)) {
      r.note(std::string(name) + " is not given: Megatron-LM's default 0.1 (its mask kernels are priced)");
    }
  }
}

}  // namespace

json read_megatron_model(FlagReader& r, int64_t& num_layers) {
  json m = json::object();
  if (!r.has("--num-layers") && r.has("--encoder-num-layers")) {
    num_layers = r.required_integer("--encoder-num-layers", 1, kMaxLayers);
  } else {
    num_layers = r.required_integer("--num-layers", 1, kMaxLayers);
  }
  const int64_t hidden = r.required_integer("--hidden-size", 1, kMaxWidth);
  const int64_t heads = r.required_integer("--num-attention-heads", 1, kMaxHeads);
  m["num_layers"] = num_layers;
  m["hidden_size"] = hidden;
  m["num_attention_heads"] = heads;
  const bool swiglu = read_activation(r, m);
  const int64_t ffn = read_ffn(r, hidden, swiglu);
  m["ffn_hidden_size"] = ffn;
  read_attention(r, m, hidden, heads);
  read_position_embedding(r, m);
  read_vocab(r, m);
  const auto norm = r.choice("--normalization", {"LayerNorm", "RMSNorm"});
  if (!r.has("--normalization")) r.note("--normalization is not given: Megatron-LM's default is LayerNorm");
  m["norm"] = norm.value_or(0) == 1 ? "rmsnorm" : "layernorm";
  m["tie_embeddings"] = !r.flag("--untie-embeddings-and-output-weights");
  m["linear_bias"] = !r.flag("--disable-bias-linear");
  if (r.flag("--add-qkv-bias") && !m["linear_bias"].get<bool>()) {
    r.note("--add-qkv-bias: biases on the QKV projection only are not modelled (linear_bias false)");
  }
  m["qk_layernorm"] = r.flag("--qk-layernorm");
  read_window(r, m, num_layers);
  if (const auto mtp = r.integer("--mtp-num-layers", 0, kMaxMtpLayers); mtp && *mtp > 0) {
    m["mtp_num_layers"] = *mtp;
  }
  read_moe(r, m, num_layers, ffn);
  note_unmodelled(r);
  return m;
}

}  // namespace trainsim::interop
