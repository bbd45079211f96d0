// system.efficiency: GEMM plateaus per kernel format, the attention kernel
// table, HBM streaming and per-kernel costs, host launch costs and the
// measured tables; system.provenance. Every efficiency is a fraction of a
// datasheet peak: (0, 1].
#include <algorithm>
#include <cstdlib>
#include <string>

#include "input_limits.h"
#include "schema/config_schema.h"
#include "trainsim/units.h"

namespace trainsim::schema {
namespace {

constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kDerived = Presence::kDerived;
constexpr Presence kOptional = Presence::kOptional;
constexpr Presence kDefault = Presence::kDefault;

using Plateaus = std::array<double, kNumGemmFormats>;

// {"bf16": 0.8, "fp8": 0.7, ...}: one GEMM plateau per kernel format.
const Table<Plateaus>& plateau_table(bool bf16_required) {
  using P = Fields<Plateaus>;
  auto make = [](bool required) {
    const Presence bf16 = required ? kRequired : kOptional;
    return Table<Plateaus>{
        P::number("bf16", [](auto& p) -> auto& { return p[0]; }, bf16, kMinRate, 1.0, false, 1.0,
                  {"", "BF16", "fraction of the dense bf16 (fp16) peak"}),
        P::number("fp8", [](auto& p) -> auto& { return p[1]; }, kOptional, kMinRate, 1.0, false, 1.0,
                  {"", "FP8 per-tensor", "per-tensor scaled fp8 (delayed / tensorwise recipes), fraction of the fp8 peak"}),
        P::number("fp8_blockwise", [](auto& p) -> auto& { return p[2]; }, kOptional, kMinRate, 1.0, false, 1.0,
                  {"", "FP8 blockwise", "1x128 / 128x128 block-scaled fp8 (blockwise recipe), fraction of the fp8 peak"}),
        P::number("mxfp8", [](auto& p) -> auto& { return p[3]; }, kOptional, kMinRate, 1.0, false, 1.0,
                  {"", "MXFP8", "1x32 block-scaled fp8 (mxfp8 recipe), fraction of the fp8 peak"}),
        P::number("nvfp4", [](auto& p) -> auto& { return p[4]; }, kOptional, kMinRate, 1.0, false, 1.0,
                  {"", "NVFP4", "NVFP4 (fp4 runs), fraction of the fp4 peak"}),
    };
  };
  static const Table<Plateaus> required = make(true);
  static const Table<Plateaus> optional = make(false);
  return bf16_required ? required : optional;
}

const Table<MemoryKernelSpec>& kernel_table() {
  using K = Fields<MemoryKernelSpec>;
  static const Table<MemoryKernelSpec> table = {
      K::number("efficiency", TRAINSIM_AT(efficiency), kRequired, kMinRate, 1.0, false, 1.0,
                {"", "Efficiency", "achieved fraction of HBM bandwidth (large streaming copies)"}),
      K::number("latency_us", TRAINSIM_AT(latency_s), kRequired, 0.0, 1e6, false, kMicro,
                {"us", "Latency", "fixed GPU-side cost per kernel"}),
  };
  return table;
}

const Table<HostSpec>& host_table() {
  using H = Fields<HostSpec>;
  static const Table<HostSpec> table = {
      H::number("launch_us", TRAINSIM_AT(launch_s), kDefault, 0.0, 1e6, false, kMicro,
                {"us", "Host per kernel", "CPU time per eagerly launched kernel (PyTorch + Transformer Engine dispatch); 0 = host time not modelled"}),
      H::number("native_launch_us", TRAINSIM_AT(native_launch_s), kDefault, 0.0, 1e6, false, kMicro,
                {"us", "Host per native kernel", "CPU time per kernel native code launches in a loop within one call (Transformer Engine C++: per-expert casts of a grouped linear, userbuffers chunks)"}),
      H::number("expert_gemm_launch_us", TRAINSIM_AT(expert_gemm_launch_s), kDefault, 0.0, 1e6, false, kMicro,
                {"us", "Host per expert GEMM", "CPU time per expert GEMM of a grouped linear after the first (Transformer Engine general_grouped_gemm: cuBLASLt call and stream hand-off per expert)"}),
      H::number("sync_us", TRAINSIM_AT(sync_s), kDefault, 0.0, 1e6, false, kMicro,
                {"us", "Host sync", "GPU idle per host-device synchronisation (dropless MoE token counts)"}),
  };
  return table;
}

bool positive_integer_key(const std::string& key, int64_t& out) {
  char* end = nullptr;
  const long long value = std::strtoll(key.c_str(), &end, 10);
  if (key.empty() || end == nullptr || *end != '\0' || value < 1 || value > kMaxSeqLen) return false;
  out = value;
  return true;
}

// {"<head_dim>": {"causal"|"non_causal": {"<seq_len>": efficiency, ...}}, ...}
void read_attention_pass(const nlohmann::json& value, const std::string& path,
                         std::vector<AttentionCurve>& out, Issues& issues) {
  if (!value.is_object()) {
    issues.push_back({path, "expected object, got " + describe_json_value(value)});
    return;
  }
  for (const auto& [dim_key, masks] : value.items()) {
    const std::string dim_path = path + "/" + json_pointer_escape(dim_key);
    int64_t head_dim = 0;
    if (!positive_integer_key(dim_key, head_dim)) {
      issues.push_back({dim_path, "expected a head dimension (a positive integer) as the key"});
      continue;
    }
    if (!masks.is_object()) {
      issues.push_back({dim_path, "expected object, got " + describe_json_value(masks)});
      continue;
    }
    for (const auto& [mask, points] : masks.items()) {
      const std::string mask_path = dim_path + "/" + json_pointer_escape(mask);
      if (mask != "causal" && mask != "non_causal") {
        issues.push_back({mask_path, "unknown key (expected \"causal\" or \"non_causal\")"});
        continue;
      }
      if (!points.is_object() || points.empty()) {
        issues.push_back({mask_path, "expected a non-empty object {\"<seq_len>\": efficiency}"});
        continue;
      }
      AttentionCurve curve;
      curve.head_dim = head_dim;
      curve.causal = mask == "causal";
      for (const auto& [seq_key, efficiency] : points.items()) {
        const std::string point_path = mask_path + "/" + json_pointer_escape(seq_key);
        int64_t seq_len = 0;
        if (!positive_integer_key(seq_key, seq_len)) {
          issues.push_back({point_path, "expected a sequence length (a positive integer) as the key"});
          continue;
        }
        if (!efficiency.is_number() || efficiency.get<double>() < kMinRate || efficiency.get<double>() > 1.0) {
          issues.push_back({point_path, "expected a fraction of peak in (0, 1], got " + describe_json_value(efficiency)});
          continue;
        }
        curve.points.emplace_back(static_cast<double>(seq_len), efficiency.get<double>());
      }
      std::sort(curve.points.begin(), curve.points.end());
      if (!curve.points.empty()) out.push_back(std::move(curve));
    }
  }
}

nlohmann::json write_attention_pass(const std::vector<AttentionCurve>& curves) {
  nlohmann::json out = nlohmann::json::object();
  for (const AttentionCurve& c : curves) {
    nlohmann::json& points = out[std::to_string(c.head_dim)][c.causal ? "causal" : "non_causal"];
    points = nlohmann::json::object();
    for (const auto& [seq_len, efficiency] : c.points) {
      points[std::to_string(static_cast<int64_t>(seq_len))] = efficiency;
    }
  }
  return out;
}

Field<EfficiencySpec> attention_row() {
  FieldInfo info = Fields<EfficiencySpec>::info(
      "attention", Type::kObject, kRequired,
      {"", "Attention kernels", "{\"forward\"|\"backward\": {\"<head_dim>\": {\"causal\"|\"non_causal\": {\"<seq_len>\": efficiency}}}, \"tiles_half\": {\"forward\", \"backward\"}}: fraction of the bf16 peak on executed FLOPs (a causal kernel counts the computed half) of a fully occupied GPU, interpolated in log(seq_len) and head_dim; with t thread blocks (batch x heads x 128-query tiles) a pass reaches t/(t + tiles_half) of it"});
  auto read = [](ObjectReader& r, EfficiencySpec& e, const ReadContext&) {
    const nlohmann::json* value = r.raw("attention");
    if (value == nullptr) {
      r.issues().push_back({r.path_of("attention"), "missing required key"});
      return;
    }
    ObjectReader a(*value, r.path_of("attention"), r.issues());
    if (!a.ok()) return;
    if (const nlohmann::json* tiles = a.raw("tiles_half")) {
      ObjectReader t(*tiles, a.path_of("tiles_half"), r.issues());
      if (t.ok()) {
        e.attention.forward_tiles_half = t.number_or("forward", 0.0, 0.0, 1e9, false);
        e.attention.backward_tiles_half = t.number_or("backward", 0.0, 0.0, 1e9, false);
        t.finish();
      }
    }
    for (const char* pass : {"forward", "backward"}) {
      const nlohmann::json* curves = a.raw(pass);
      if (curves == nullptr) {
        r.issues().push_back({a.path_of(pass), "missing required key"});
        continue;
      }
      std::vector<AttentionCurve>& out = std::string(pass) == "forward" ? e.attention.forward
                                                                        : e.attention.backward;
      read_attention_pass(*curves, a.path_of(pass), out, r.issues());
      if (out.empty()) r.issues().push_back({a.path_of(pass), "needs at least one curve"});
    }
    a.finish();
  };
  auto write = [](const EfficiencySpec& e, nlohmann::json& out) {
    out["attention"] = {{"forward", write_attention_pass(e.attention.forward)},
                        {"backward", write_attention_pass(e.attention.backward)}};
    if (e.attention.forward_tiles_half > 0.0 || e.attention.backward_tiles_half > 0.0) {
      out["attention"]["tiles_half"] = {{"forward", e.attention.forward_tiles_half},
                                        {"backward", e.attention.backward_tiles_half}};
    }
  };
  return Fields<EfficiencySpec>::custom(info, read, write);
}

// {"<SimuMax shape key>": efficiency, ...}; null = unmeasured (a miss).
Field<EfficiencySpec> measured_row(const char* key, std::map<std::string, double> EfficiencySpec::*member) {
  FieldInfo info = Fields<EfficiencySpec>::info(key, Type::kMap, kOptional,
                                                {"", key, "measured efficiency by SimuMax shape key"});
  info.items = Type::kNumber;
  auto read = [key, member](ObjectReader& r, EfficiencySpec& e, const ReadContext&) {
    const nlohmann::json* entries = r.raw(key);
    if (entries == nullptr) return;
    if (!entries->is_object()) {
      r.issues().push_back({r.path_of(key), "expected object, got " + describe_json_value(*entries)});
      return;
    }
    for (const auto& [shape, efficiency] : entries->items()) {
      if (efficiency.is_null()) continue;  // unmeasured shape: falls back like a miss
      // An efficiency is a fraction of the datasheet peak: (0, 1].
      if (!efficiency.is_number() || efficiency.get<double>() < kMinRate || efficiency.get<double>() > 1.0) {
        r.issues().push_back({r.path_of(key) + "/" + json_pointer_escape(shape),
                              "expected a fraction of peak in (0, 1], got " + describe_json_value(efficiency)});
        continue;
      }
      (e.*member)[shape] = efficiency.get<double>();
    }
  };
  auto write = [key, member](const EfficiencySpec& e, nlohmann::json& out) {
    if (!(e.*member).empty()) out[key] = e.*member;
  };
  return Fields<EfficiencySpec>::custom(info, read, write);
}

const Table<EfficiencySpec>& measured_table() {
  static const Table<EfficiencySpec> table = {
      measured_row("gemm", &EfficiencySpec::measured_gemm),
      measured_row("grouped_gemm", &EfficiencySpec::measured_grouped_gemm),
      measured_row("attention_forward", &EfficiencySpec::measured_attention_forward),
      measured_row("attention_backward", &EfficiencySpec::measured_attention_backward),
  };
  return table;
}

}  // namespace

const Table<EfficiencySpec>& efficiency_table() {
  using E = Fields<EfficiencySpec>;
  const auto memory = [](const EfficiencySpec& e) { return e.memory; };
  static const Table<EfficiencySpec> table = {
      E::object("gemm", TRAINSIM_AT(gemm), plateau_table(true), kRequired,
                {"", "GEMM plateau", "per kernel format: the fraction of its dense peak a large, wave-aligned, long-K GEMM sustains (the shape model scales it down for small and skinny shapes)"}),
      E::object("grouped_gemm", TRAINSIM_AT(grouped_gemm), plateau_table(false), kOptional,
                {"", "Grouped GEMM plateau", "per kernel format, for expert GEMMs; absent = gemm's"}),
      E::number("gemm_k_half", TRAINSIM_AT(gemm_k_half), kDefault, 0.0, 1e9, false, 1.0,
                {"", "GEMM K half", "K at which a bf16 GEMM reaches half its plateau (eff *= K/(K + k_half)); low-precision formats scale it by their peak over the bf16 peak; 0 = no roll-off"}),
      E::number("sustained_fraction", TRAINSIM_AT(sustained_fraction), kDefault, kMinRate, 1.0, false, 1.0,
                {"", "Sustained fraction", "fraction of the microbenchmarked GEMM and attention efficiencies sustained under a long training load (not applied to measured tables)"}),
      E::integer("num_sms", TRAINSIM_AT(num_sms), kDefault, 0, kMaxSms,
                 {"", "SMs", "streaming multiprocessors, for wave quantization; 0 = off"}),
      E::integer("tile_m", TRAINSIM_AT(tile_m), kDefault, 1, 1 << 16, {"", "Tile M", "GEMM tile rows (wave quantization)"}),
      E::integer("tile_n", TRAINSIM_AT(tile_n), kDefault, 1, 1 << 16, {"", "Tile N", "GEMM tile columns (wave quantization)"}),
      attention_row(),
      E::object("memory", TRAINSIM_AT(memory), kernel_table(), kRequired,
                {"", "Memory-bound kernels", "HBM streaming efficiency and the fixed GPU cost of every kernel"}),
      E::object("permute", TRAINSIM_AT(permute), kernel_table(), kDerived,
                {"", "Permute kernels", "MoE token permutation (measured classes, SimuMax); default memory's"}, memory),
      E::object("cross_entropy", TRAINSIM_AT(cross_entropy), kernel_table(), kDerived,
                {"", "Cross-entropy", "unfused cross-entropy; default memory's"}, memory),
      E::object("cross_entropy_fused", TRAINSIM_AT(cross_entropy_fused), kernel_table(), kDerived,
                {"", "Fused cross-entropy", "fused cross-entropy; default memory's"}, memory),
      E::object("host", TRAINSIM_AT(host), host_table(), kDefault,
                {"", "Host", "CPU launch and synchronisation costs"}),
      E::object("measured", [](auto& e) -> auto& { return e; }, measured_table(), kOptional,
                {"", "Measured", "measured efficiency tables (SimuMax format); a shape found here wins"}),
  };
  return table;
}

}  // namespace trainsim::schema
