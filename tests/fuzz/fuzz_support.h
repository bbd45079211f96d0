// Shared by the libFuzzer targets: the envelope contract every public entry
// point must keep, and a JSON-aware mutator that edits the values of parsed
// documents (libFuzzer's byte mutations rarely keep JSON well-formed).
//
// Contract (core/include/trainsim/trainsim.h): the output is one JSON object
// {"schema_version":1,"ok":true,"result":{...}} or
// {"schema_version":1,"ok":false,"errors":[{"path":"...","message":"..."}, ...]}
// with a non-empty message per error and never "internal": an internal error
// is a bug. A violation aborts, so libFuzzer saves the input as a crash.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace trainsim::fuzz {

using nlohmann::json;

// Separates the documents of a multi-document input (importers taking several files).
inline constexpr std::string_view kSeparator = "\n=====\n";

[[noreturn]] inline void fail(const char* what, const std::string& output) {
  std::fprintf(stderr, "\n*** trainsim fuzz invariant violated: %s\n*** output: %.4000s\n", what,
               output.c_str());
  std::abort();
}

inline std::vector<std::string> split_documents(std::string_view text, size_t count) {
  std::vector<std::string> parts;
  while (parts.size() + 1 < count) {
    const size_t at = text.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.emplace_back(text.substr(0, at));
    text.remove_prefix(at + kSeparator.size());
  }
  parts.emplace_back(text);
  parts.resize(count);
  return parts;
}

// Numbers only reach JSON when finite; a NaN or Inf would appear as null (nlohmann)
// or as invalid text. Results carry no nulls, so any null is a leaked non-finite.
inline void check_no_nulls(const json& value, const std::string& output) {
  if (value.is_null()) fail("null (a non-finite number?) inside result", output);
  if (value.is_structured()) {
    for (const auto& item : value) check_no_nulls(item, output);
  }
}

// Checks the envelope contract; returns the parsed envelope.
inline json check_envelope(const std::string& output) {
  json envelope = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (envelope.is_discarded()) fail("output is not valid JSON", output);
  if (!envelope.is_object()) fail("envelope is not an object", output);
  if (envelope.contains("internal")) fail("internal error (a bug, not a bad input)", output);
  const auto version = envelope.find("schema_version");
  if (version == envelope.end() || *version != 1) fail("schema_version is not 1", output);
  const auto ok = envelope.find("ok");
  if (ok == envelope.end() || !ok->is_boolean()) fail("ok is not a boolean", output);
  if (ok->get<bool>()) {
    if (!envelope.contains("result")) fail("ok envelope without result", output);
    if (envelope.contains("errors")) fail("ok envelope with errors", output);
    return envelope;
  }
  const auto errors = envelope.find("errors");
  if (errors == envelope.end() || !errors->is_array() || errors->empty()) {
    fail("error envelope without a non-empty errors array", output);
  }
  for (const json& error : *errors) {
    if (!error.is_object()) fail("error is not an object", output);
    const auto path = error.find("path");
    const auto message = error.find("message");
    if (path == error.end() || !path->is_string()) fail("error without a string path", output);
    const std::string& p = path->get_ref<const std::string&>();
    if (!p.empty() && p[0] != '/') fail("error path is not a JSON pointer", output);
    if (message == error.end() || !message->is_string() ||
        message->get_ref<const std::string&>().empty()) {
      fail("error without a non-empty message", output);
    }
  }
  return envelope;
}

inline bool near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

// An ok estimate must be sane: finite, non-negative parts that add up to their totals.
inline void check_estimate_result(const json& result, const std::string& output) {
  check_no_nulls(result, output);
  const json& memory = result.at("memory");
  double peak = 0.0;
  for (const json& stage : memory.at("stages")) {
    double sum = 0.0;
    for (const char* part : {"parameters_bytes", "gradients_bytes", "optimizer_bytes",
                             "buffers_bytes", "activations_bytes", "transient_bytes"}) {
      const double bytes = stage.at(part).get<double>();
      if (!(bytes >= 0.0)) fail("negative memory part", output);
      sum += bytes;
    }
    const double stage_peak = stage.at("peak_bytes").get<double>();
    if (!near(sum, stage_peak, 1e-9)) fail("memory parts do not add up to peak_bytes", output);
    peak = std::max(peak, stage_peak);
  }
  if (!(peak > 0.0) || memory.at("peak_bytes").get<double>() != peak) {
    fail("memory.peak_bytes is not the largest positive stage peak", output);
  }
  const json& time = result.at("time");
  const double iteration = time.at("iteration_s").get<double>();
  if (!(iteration > 0.0)) fail("iteration_s is not positive", output);
  double sum = 0.0;
  for (const auto& [name, seconds] : time.at("breakdown").items()) {
    if (!(seconds.get<double>() >= 0.0)) fail("negative time breakdown part", output);
    sum += seconds.get<double>();
  }
  if (!near(sum, iteration, 1e-9)) fail("time breakdown does not add up to iteration_s", output);
}

// Largest magnitude among the numbers directly inside an object or array.
inline double largest_number(const json& a) {
  double scale = 0.0;
  for (const json& item : a) {
    if (item.is_number()) scale = std::max(scale, std::fabs(item.get<double>()));
  }
  return scale;
}

// First place where two JSON values differ, or "". Numbers may differ by `rel`
// of the largest number beside them: residual parts such as bubble_s (the step
// minus everything else) carry the rounding noise of their siblings.
inline std::string first_difference(const json& a, const json& b, double rel,
                                    const std::string& path = "", double scale = 0.0) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::fabs(x - y) <= rel * std::max({std::fabs(x), std::fabs(y), scale})
               ? ""
               : path + ": " + a.dump() + " vs " + b.dump();
  }
  if (a.type() != b.type() || a.size() != b.size()) return path + ": " + a.dump(-1).substr(0, 80);
  const double inner = a.is_structured() ? std::max(largest_number(a), largest_number(b)) : 0.0;
  if (a.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key)) return path + "/" + key + ": missing";
      const std::string d = first_difference(value, b[key], rel, path + "/" + key, inner);
      if (!d.empty()) return d;
    }
  } else if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string d = first_difference(a[i], b[i], rel, path + "/" + std::to_string(i), inner);
      if (!d.empty()) return d;
    }
  } else if (a != b) {
    return path + ": " + a.dump() + " vs " + b.dump();
  }
  return "";
}

// ---- JSON-aware mutator --------------------------------------------------

class JsonMutator {
 public:
  explicit JsonMutator(unsigned seed) : rng_(seed) {}

  // Mutates one value of a parsed document in place.
  void mutate(json& document) {
    std::vector<json*> nodes;
    collect(document, nodes);
    json& node = *nodes[pick(nodes.size())];
    switch (pick(6)) {
      case 0:
      case 1:
        node = interesting_number(node);
        break;
      case 2:
        node = random_scalar();
        break;
      case 3:
        if (node.is_object() && !node.empty()) {
          auto it = node.begin();
          std::advance(it, static_cast<std::ptrdiff_t>(pick(node.size())));
          node.erase(it.key());
        } else if (node.is_array() && !node.empty()) {
          node.erase(pick(node.size()));
        } else {
          node = json();
        }
        break;
      case 4: {
        json& target = node.is_object() ? node : document;
        if (target.is_object()) target[word(kKeys)] = random_scalar();
        break;
      }
      default:
        if (node.is_array()) {
          node.push_back(node.empty() ? random_scalar() : node[pick(node.size())]);
        } else {
          node = json(word(kStrings));
        }
        break;
    }
  }

 private:
  static constexpr const char* kKeys[] = {
      "model", "training", "system", "preset", "schema_version", "num_layers", "hidden_size",
      "num_attention_heads", "num_kv_heads", "head_dim", "ffn_hidden_size", "vocab_size",
      "make_vocab_size_divisible_by", "max_position_embeddings", "position_embedding", "mla",
      "moe", "num_experts", "top_k", "expert_ffn_hidden_size", "shared_expert_ffn_hidden_size",
      "num_dense_layers", "q_lora_rank", "kv_lora_rank", "seq_len", "micro_batch_size",
      "global_batch_size", "num_micro_batches", "tp", "pp", "dp", "cp", "ep", "etp", "vpp",
      "sequence_parallel", "num_layers_in_first_stage", "num_layers_in_last_stage", "zero_stage",
      "dtype", "recompute", "granularity", "method", "modules", "keep_tail_outputs",
      "moe_capacity_factor", "moe_pad_to_capacity", "cp_comm_type", "te_version", "num_gpus",
      "gpus_per_node", "straggler_coefficient", "hbm_capacity_gib", "hbm_bandwidth_gb_per_s",
      "bandwidth_gb_per_s", "latency_us", "efficiency", "intra_node_tiers", "max_group_size",
      "train_tokens", "tie_embeddings", "linear_bias"};
  static constexpr const char* kStrings[] = {
      "llama3-8b", "deepseek-v3", "mixtral-8x7b", "gpt3-175b", "h100-sxm-80gb",
      "a100-pcie-80gb", "full", "selective", "none", "block", "uniform", "bf16", "fp16", "fp8",
      "a2a", "p2p", "all_gather", "core_attn", "mlp", "moe", "moe_act", "mla_up_proj", "learned",
      "gelu", "layernorm", "2.11", "", "\xff\xfe", "1e400"};

  size_t pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  template <size_t N>
  const char* word(const char* const (&list)[N]) { return list[pick(N)]; }

  static void collect(json& node, std::vector<json*>& out) {
    out.push_back(&node);
    if (node.is_structured()) {
      for (auto& item : node) collect(item, out);
    }
  }

  json interesting_number(const json& current) {
    static constexpr int64_t kInts[] = {0, 1, -1, 2, 3, 7, 8, 16, 64, 127, 128, 1000, 4096,
                                        65535, 65536, 100000, 100001, int64_t{1} << 24,
                                        (int64_t{1} << 24) + 1, int64_t{1} << 26,
                                        (int64_t{1} << 26) + 1, int64_t{1} << 30,
                                        int64_t{2147483647}, int64_t{1} << 32, int64_t{1} << 53,
                                        INT64_MAX, INT64_MIN};
    static constexpr double kDoubles[] = {0.5, 1.5, 1e-9, 5e-324, 1e-308, 1e6, 1e7, 1e9, 1e15,
                                          1.7e308, -0.0, 0.999999};
    const double value = current.is_number() ? current.get<double>() : 1.0;
    switch (pick(5)) {
      case 0:
        return kInts[pick(std::size(kInts))];
      case 1:
        return kDoubles[pick(std::size(kDoubles))];
      case 2:
        if (current.is_number_integer()) {
          const int64_t v = current.get<int64_t>();
          const int64_t deltas[] = {1, -1, v, -(v / 2)};  // -(v / 2) never overflows
          const int64_t d = deltas[pick(4)];
          if ((d > 0 && v > INT64_MAX - d) || (d < 0 && v < INT64_MIN - d)) return v;
          return v + d;
        }
        return value * 2.0;
      case 3:
        return json(static_cast<uint64_t>(UINT64_MAX - pick(3)));
      default:
        return value / 2.0;
    }
  }

  json random_scalar() {
    switch (pick(6)) {
      case 0:
        return nullptr;
      case 1:
        return pick(2) == 0;
      case 2:
        return json::object();
      case 3:
        return json::array();
      case 4:
        return word(kStrings);
      default:
        return interesting_number(json());
    }
  }

  std::minstd_rand rng_;
};

// LLVMFuzzerCustomMutator body: half the time edit one value of one parsed
// document (of `count` separated documents), else libFuzzer's byte mutations.
inline size_t mutate_input(uint8_t* data, size_t size, size_t max_size, unsigned seed,
                           size_t count) {
  if (seed % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<std::string> docs =
      split_documents(std::string_view(reinterpret_cast<const char*>(data), size), count);
  const size_t which = (seed / 2) % count;
  json document = json::parse(docs[which], nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return LLVMFuzzerMutate(data, size, max_size);
  JsonMutator(seed).mutate(document);
  docs[which] = document.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string text = docs[0];
  for (size_t i = 1; i < count; ++i) text += std::string(kSeparator) + docs[i];
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

}  // namespace trainsim::fuzz
