// Random valid config documents for the property tests: dense (MHA/GQA), MoE
// and MLA models with every parallel degree (tp, pp, vpp, dp, cp, ep, etp, sp),
// recompute mode, ZeRO stage and dtype drawn from a seed; the seed's remainder
// mod 4 decides the model family.
#pragma once

#include <string>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iterator>
#include <random>
#include <vector>

namespace trainsim::testing {

using nlohmann::json;

inline const char* const kSystems[] = {"h100-sxm-80gb", "a100-sxm-80gb", "b200-sxm-180gb",
                                "mi300x-192gb", "h200-sxm-141gb", "a100-pcie-80gb"};

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  int64_t pick(std::vector<int64_t> options) {
    return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(engine_)];
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(engine_); }

 private:
  std::mt19937_64 engine_;
};

inline std::vector<int64_t> dividing(std::vector<int64_t> candidates, auto&& ok) {
  std::vector<int64_t> out;
  for (int64_t c : candidates) {
    if (ok(c)) out.push_back(c);
  }
  return out.empty() ? std::vector<int64_t>{1} : out;
}

// A random valid config document. The "kind" decides the model family.
inline json random_config(uint64_t seed) {
  Rng r(seed);
  const int kind = static_cast<int>(seed % 4);  // 0 MHA, 1 GQA, 2 MoE (GQA), 3 MLA (+MoE)
  const bool moe = kind == 2 || (kind == 3 && r.coin());
  const bool mla = kind == 3;
  const int64_t heads = r.pick({8, 16, 32});
  const int64_t head_dim = r.pick({64, 128});
  const int64_t hidden = mla ? r.pick({1024, 2048}) : heads * head_dim;
  const int64_t kv = kind == 0 || mla ? heads : r.pick({1, 2, 4, 8});
  const int64_t layers = r.pick({2, 4, 6, 8, 12, 16});
  const int64_t ffn = hidden * r.pick({2, 3, 4});
  json model = {{"num_layers", layers},
                {"hidden_size", hidden},
                {"num_attention_heads", heads},
                {"num_kv_heads", kv},
                {"ffn_hidden_size", ffn},
                {"vocab_size", r.pick({32000, 50257, 128256})},
                {"activation", r.coin() ? "swiglu" : "gelu"},
                {"norm", r.coin() ? "rmsnorm" : "layernorm"},
                {"tie_embeddings", r.coin(0.3)},
                {"linear_bias", r.coin(0.2)},
                {"qk_layernorm", r.coin(0.2)}};
  if (mla && seed % 3 == 0) model["mtp_num_layers"] = 1;  // from the seed: the draws stay as they were
  if (mla) {
    const int64_t nope = r.pick({64, 128});
    const int64_t rope = r.pick({32, 64});
    model["head_dim"] = nope + rope;
    model["mla"] = {{"q_lora_rank", r.pick({0, 384})},
                    {"kv_lora_rank", r.pick({256, 512})},
                    {"qk_nope_head_dim", nope},
                    {"qk_rope_head_dim", rope},
                    {"v_head_dim", r.pick({64, 128})}};
  }
  int64_t experts = 1;
  int64_t expert_ffn = 0;
  int64_t shared = 0;
  if (moe) {
    experts = r.pick({4, 8, 16, 64});
    expert_ffn = r.pick({256, 512, 1024});
    shared = r.pick({0, 0, 512});
    model["moe"] = {{"num_experts", experts},
                    {"top_k", std::min<int64_t>(experts, r.pick({1, 2, 4, 8}))},
                    {"expert_ffn_hidden_size", expert_ffn},
                    {"shared_expert_ffn_hidden_size", shared},
                    {"num_dense_layers", r.pick({0, 0, 1})}};
  }
  const int64_t tp = r.pick(dividing({1, 2, 4, 8}, [&](int64_t t) {
    return heads % t == 0 && (mla || kv % t == 0) && ffn % t == 0 && shared % t == 0;
  }));
  const int64_t pp = r.pick(dividing({1, 2, 4}, [&](int64_t p) { return layers % p == 0; }));
  const int64_t vpp =
      pp > 1 && (layers / pp) % 2 == 0 && r.coin() ? 2 : 1;
  const int64_t cp = r.pick({1, 1, 2});
  const int64_t dp = r.pick({1, 2, 4});
  const int64_t seq = r.pick({512, 1024, 2048, 4096});
  const int64_t micro_batches = pp * r.pick({1, 2, 4});
  json training = {{"seq_len", seq},
                   {"micro_batch_size", r.pick({1, 2})},
                   {"num_micro_batches", micro_batches},
                   {"tp", tp},
                   {"pp", pp},
                   {"vpp", vpp},
                   {"cp", cp},
                   {"dp", dp},
                   {"sequence_parallel", tp > 1 && r.coin()},
                   {"zero_stage", r.pick({0, 1, 2, 3})},
                   {"dtype", r.coin(0.7) ? "bf16" : (r.coin() ? "fp16" : "fp8")},
                   {"flash_attention", r.coin(0.8)},
                   {"fused_cross_entropy", r.coin()},
                   {"overlap_grad_reduce", r.coin()},
                   {"overlap_param_gather", r.coin()},
                   {"grad_reduce_in_bf16", r.coin(0.3)}};
  if (cp > 1) {
    training["flash_attention"] = true;  // TE runs CP only in flash / fused attention
    const bool a2a = heads % (tp * cp) == 0 && (mla || kv % (tp * cp) == 0);
    training["cp_comm_type"] = a2a && r.coin() ? "a2a" : (r.coin() ? "p2p" : "all_gather");
  }
  if (moe) {
    training["ep"] = r.pick(dividing({1, 2, 4, 8}, [&](int64_t e) {
      return experts % e == 0 && (tp * cp * dp) % e == 0;
    }));
    const int64_t ep = training["ep"];
    training["etp"] = r.pick(dividing({1, tp}, [&](int64_t t) {
      return expert_ffn % t == 0 && (tp * cp * dp) % (ep * t) == 0;
    }));
    if (r.coin(0.3)) {
      training["moe_pad_to_capacity"] = true;
      training["moe_capacity_factor"] = 1.25;
    }
  }
  const int64_t chunk_layers = layers / pp / vpp;
  switch (r.pick({0, 1, 2, 3})) {
    case 1: {
      json modules = {"core_attn"};
      if (r.coin()) modules.push_back(moe ? "moe_act" : "mlp");
      if (mla && r.coin()) modules.push_back("mla_up_proj");
      if (r.coin(0.3)) modules.push_back("layernorm");
      training["recompute"] = {{"granularity", "selective"}, {"modules", modules}};
      break;
    }
    case 2:
      training["recompute"] = {{"granularity", "full"},
                               {"method", "block"},
                               {"num_layers", r.pick({1, chunk_layers})}};
      break;
    case 3:
      training["recompute"] = {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}};
      break;
    default:
      break;
  }
  // Drawn last, so the draws above (and the cases they found) stay as they were.
  if (pp > 1 && tp > 1 && r.coin(0.3)) training["scatter_gather_tensors_in_pipeline"] = true;
  json system = {{"preset", kSystems[seed % std::size(kSystems)]}, {"num_gpus", tp * pp * cp * dp}};
  // A100s have no fp8 tensor cores: fp8 there is an error, not a config to test.
  if (std::string(kSystems[seed % std::size(kSystems)]).rfind("a100", 0) == 0 &&
      training["dtype"] == "fp8") {
    training["dtype"] = "bf16";
  }
  return {{"model", model}, {"training", training}, {"system", system}};
}

}  // namespace trainsim::testing
