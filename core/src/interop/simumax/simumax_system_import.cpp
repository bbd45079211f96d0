// SimuMax units: "gbps" is GiB/s (its code multiplies by 2^30); tflops are
// 1e12 FLOP/s; latencies in microseconds. Inter-node "gbps" is per node and
// becomes per GPU here. SimuMax's fixed constants that live in its code become
// explicit system fields: the 0.09 straggler coefficient (perf_llm.py).
#include "interop/simumax/simumax_system_import.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "schema/json_reader.h"

namespace trainsim::interop {

using schema::describe_json_value;
using schema::json_pointer_escape;
namespace {

using nlohmann::json;

constexpr double kGibPerGb = 1.073741824;  // GiB/s -> GB/s
constexpr double kSimumaxStragglerCoefficient = 0.09;

const json* child(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A number member; absent or null gives `fallback`, another type is an issue.
double number(const json* object, const std::string& path, const char* key, double fallback,
              Issues& issues) {
  const json* value = object != nullptr ? child(*object, key) : nullptr;
  if (value == nullptr || value->is_null()) return fallback;
  if (!value->is_number()) {
    issues.push_back({path + "/" + json_pointer_escape(key),
                      "expected number, got " + describe_json_value(*value)});
    return fallback;
  }
  return value->get<double>();
}

// A boolean member (absent or null: false).
bool flag(const json& object, const std::string& path, const char* key, Issues& issues) {
  const json* value = child(object, key);
  if (value == nullptr || value->is_null()) return false;
  if (!value->is_boolean()) {
    issues.push_back({path + "/" + key, "expected boolean, got " + describe_json_value(*value)});
    return false;
  }
  return value->get<bool>();
}

json convert_link(const json& network, double bandwidth_divisor, const std::string& path,
                  Issues& issues) {
  const json* bandwidth = child(network, "bandwidth");
  if (bandwidth == nullptr) {
    issues.push_back({path + "/bandwidth", "missing required key"});
    return nullptr;
  }
  const std::string bw_path = path + "/bandwidth";
  json link = {{"bandwidth_gb_per_s",
                number(bandwidth, bw_path, "gbps", 0.0, issues) * kGibPerGb / bandwidth_divisor},
               {"latency_us", number(bandwidth, bw_path, "latency_us", 0.0, issues)},
               {"efficiency", number(bandwidth, bw_path, "efficient_factor", 1.0, issues)}};
  const std::pair<const char*, const char*> names[] = {{"all_reduce", "all_reduce"},
                                                       {"all_gather", "all_gather"},
                                                       {"reduce_scatter", "reduce_scatter"},
                                                       {"all2all", "all_to_all"},
                                                       {"p2p", "p2p"}};
  json collectives = json::object();
  const json* ops = child(network, "op");
  for (const auto& [theirs, ours] : names) {
    const json* op = ops != nullptr ? child(*ops, theirs) : nullptr;
    if (op == nullptr) continue;
    const std::string op_path = path + "/op/" + theirs;
    json entry = json::object();
    for (const auto& [key, name] : {std::pair{"efficient_factor", "efficiency"}, {"latency_us", "latency_us"}}) {
      const json* value = child(*op, key);
      if (value == nullptr || value->is_null()) continue;
      if (!value->is_number()) {
        issues.push_back({op_path + "/" + key, "expected number, got " + describe_json_value(*value)});
        continue;
      }
      entry[name] = *value;
    }
    if (!entry.empty()) collectives[ours] = entry;
    if (const json* fixed = child(*op, "dp_fixed_bw"); fixed != nullptr && !fixed->is_null()) {
      if (!fixed->is_object()) {
        issues.push_back({op_path + "/dp_fixed_bw",
                          "expected an object of sizes, got " + describe_json_value(*fixed)});
        continue;
      }
      json table = json::object();
      for (const auto& [size, gbps] : fixed->items()) {
        if (!gbps.is_number()) {
          issues.push_back({op_path + "/dp_fixed_bw/" + json_pointer_escape(size),
                            "expected number, got " + describe_json_value(gbps)});
          continue;
        }
        table[size] = gbps.get<double>() * kGibPerGb;
      }
      link[std::string(theirs) == "all_gather" ? "dp_all_gather_gb_per_s"
                                               : "dp_reduce_scatter_gb_per_s"] = table;
    }
  }
  if (!collectives.empty()) link["collectives"] = collectives;
  return link;
}

json memory_kernel(const json* bandwidths, const char* key, double reference_gbps, Issues& issues) {
  const json* entry = bandwidths != nullptr ? child(*bandwidths, key) : nullptr;
  if (entry == nullptr) return nullptr;
  const std::string path = std::string("/simumax_system/accelerator/bandwidth/") + key;
  // A class with its own bandwidth figure is expressed as an efficiency of HBM.
  const double gbps = number(entry, path, "gbps", reference_gbps, issues);
  return {{"efficiency", number(entry, path, "efficient_factor", 1.0, issues) * gbps / reference_gbps},
          {"latency_us", number(entry, path, "latency_us", 0.0, issues)}};
}

// Finite inputs can still overflow (1e308 GiB/s in GB/s): the first non-finite
// number of the converted system, as a JSON pointer, or "".
std::string non_finite_at(const json& value, const std::string& pointer) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return pointer.empty() ? "/" : pointer;
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      const std::string found = non_finite_at(item, pointer + "/" + json_pointer_escape(key));
      if (!found.empty()) return found;
    }
  }
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      const std::string found = non_finite_at(value[i], pointer + "/" + std::to_string(i));
      if (!found.empty()) return found;
    }
  }
  return "";
}

json measured_table(const json* op) {
  const json* table = op != nullptr ? child(*op, "accurate_efficient_factor") : nullptr;
  return table != nullptr && table->is_object() ? *table : json::object();
}

// SimuMax prices attention on the full s x s score matrix while its kernels run
// causal (MooreThreads/SimuMax simu_tools/efficency_test/test_fa_efficiency.py:
// FLOPs 2*b*s^2*h*(d_qk+d_v) forward, 5x backward, attn_mask_type "causal"), so
// its attention "efficiencies" exceed 1. trainsim prices the executed causal
// pairs, s(s+1)/2 of s^2 (model/attention_ops.cpp): the same measured time is
// an efficiency of e * (s+1)/(2s) on those FLOPs.
double executed_share(const std::string& key) {
  const auto at = key.find("seq_len=");
  if (at == std::string::npos) return 0.5;
  const double s = std::strtod(key.c_str() + at + 8, nullptr);
  return s >= 1.0 ? (s + 1.0) / (2.0 * s) : 0.5;
}

json attention_table(const json* op) {
  json table = measured_table(op);
  for (auto& [key, value] : table.items()) {
    if (value.is_number()) value = value.get<double>() * executed_share(key);
  }
  return table;
}

}  // namespace

json convert_simumax_system(const json& in, Issues& issues, std::vector<std::string>& notes) {
  const std::string path = "/simumax_system";
  const json* accelerator = child(in, "accelerator");
  const json* networks = child(in, "networks");
  if (accelerator == nullptr || networks == nullptr) {
    issues.push_back({path, "expected SimuMax keys \"accelerator\" and \"networks\""});
    return nullptr;
  }
  const json* ops = child(*accelerator, "op");
  const json* bandwidths = child(*accelerator, "bandwidth");
  const json* default_bw = bandwidths != nullptr ? child(*bandwidths, "default") : nullptr;
  if (ops == nullptr || default_bw == nullptr) {
    issues.push_back({path + "/accelerator", "expected \"op\" and \"bandwidth\".\"default\""});
    return nullptr;
  }
  if (const json* mode = child(*accelerator, "mode");
      mode != nullptr && !mode->is_null() && (!mode->is_string() || mode->get<std::string>() != "roofline")) {
    issues.push_back({path + "/accelerator/mode", "only \"roofline\" is supported, got " + describe_json_value(*mode)});
  }
  // Both divide below: a zero (or a cast of 1e300) would make the system non-finite.
  int64_t per_node = 8;
  if (const json* value = child(in, "num_per_node")) {
    if (value->is_number_integer() && value->get<double>() >= 1 && value->get<double>() <= (1 << 20)) {
      per_node = value->get<int64_t>();
    } else {
      issues.push_back({path + "/num_per_node",
                        "expected an integer from 1 to 1048576, got " + describe_json_value(*value)});
    }
  }
  const double hbm_gbps =
      number(default_bw, path + "/accelerator/bandwidth/default", "gbps", 0.0, issues);
  if (!(hbm_gbps > 0.0)) {
    const json* gbps = child(*default_bw, "gbps");
    issues.push_back({path + "/accelerator/bandwidth/default/gbps",
                      gbps == nullptr ? std::string("missing required key")
                                      : "expected a number greater than 0, got " + describe_json_value(*gbps)});
    return nullptr;
  }
  auto op_field = [&](const char* op, const char* key, double fallback) {
    return number(child(*ops, op), path + "/accelerator/op/" + op, key, fallback, issues);
  };
  const double peak = op_field("default", "tflops", 0.0);
  const double default_eff = op_field("default", "efficient_factor", 1.0);
  // SimuMax's flat (fallback) efficiencies become the plateaus; its attention
  // factor becomes a one-point table (it has no sequence dependence) on the
  // executed FLOPs (see attention_table); fp8 only where measured (> 0).
  json gemm = {{"bf16", op_field("matmul", "efficient_factor", default_eff)}};
  json grouped = {{"bf16", op_field("group_matmul", "efficient_factor", default_eff)}};
  if (const double fp8 = op_field("fp8_matmul", "efficient_factor", default_eff); fp8 > 0.0) gemm["fp8"] = fp8;
  if (const double fp8 = op_field("fp8_group_matmul", "efficient_factor", default_eff); fp8 > 0.0) {
    grouped["fp8"] = fp8;
  }
  auto flat = [](double efficiency) {
    return json{{"128", {{"causal", {{"4096", efficiency}}}}}};
  };
  json efficiency = {
      {"gemm", gemm},
      {"grouped_gemm", grouped},
      {"attention",
       {{"forward", flat(0.5 * op_field("sdp_fwd", "efficient_factor", default_eff))},
        {"backward", flat(0.5 * op_field("sdp_bwd", "efficient_factor", default_eff))}}},
      {"memory", memory_kernel(bandwidths, "default", hbm_gbps, issues)},
      {"measured",
       {{"gemm", measured_table(child(*ops, "matmul"))},
        {"grouped_gemm", measured_table(child(*ops, "group_matmul"))},
        {"attention_forward", attention_table(child(*ops, "sdp_fwd"))},
        {"attention_backward", attention_table(child(*ops, "sdp_bwd"))}}}};
  // SimuMax writes efficient_factor 0 for an op it has no measurement of (its
  // B200 file: fp8_matmul, fp8_group_matmul): left out above, with a note.
  for (const auto& [theirs, ours] : {std::pair{"fp8_matmul", "gemm"}, {"fp8_group_matmul", "grouped_gemm"}}) {
    if (op_field(theirs, "efficient_factor", default_eff) > 0.0) continue;
    notes.push_back(std::string("the SimuMax system gives ") + theirs +
                    " efficient_factor 0 (not measured): efficiency." + ours +
                    ".fp8 is left out, so trainsim's default for it applies");
  }
  for (const auto& [theirs, ours] : {std::pair{"permute_fwd", "permute"}, {"ce", "cross_entropy"},
                                     {"ce_fusion", "cross_entropy_fused"}}) {
    json kernel = memory_kernel(bandwidths, theirs, hbm_gbps, issues);
    if (!kernel.is_null()) efficiency[ours] = kernel;
  }
  const json* name = child(in, "sys_name");
  if (name != nullptr && !name->is_null() && !name->is_string()) {
    issues.push_back({path + "/sys_name", "expected string, got " + describe_json_value(*name)});
  }
  if (child(*accelerator, "mem_gbs") == nullptr) {  // SimuMax requires it (config.py SystemConfig)
    issues.push_back({path + "/accelerator/mem_gbs", "missing required key"});
  }
  json system = {
      {"name", child(in, "sys_name") != nullptr && child(in, "sys_name")->is_string()
                   ? child(in, "sys_name")->get<std::string>()
                   : "imported SimuMax system"},
      {"gpus_per_node", per_node},
      {"straggler_coefficient", kSimumaxStragglerCoefficient},
      {"gpu",
       {{"name", "SimuMax accelerator"},
        {"hbm_capacity_gib", number(accelerator, path + "/accelerator", "mem_gbs", 80.0, issues)},
        {"hbm_bandwidth_gb_per_s", hbm_gbps * kGibPerGb},
        {"peak_tflops",
         {{"bf16", peak}, {"fp16", peak}, {"fp8", op_field("fp8_matmul", "tflops", 2.0 * peak)}}}}},
      {"efficiency", efficiency}};
  const bool pcie = flag(*networks, path + "/networks", "intra_with_pcie", issues);
  if (pcie) {
    json tiers = json::array();
    for (const auto& [key, size] : {std::pair{"intra_node_pcie_2x", 2}, {"intra_node_pcie_4x", 4},
                                    {"intra_node_pcie_8x", 8}}) {
      if (const json* tier = child(*networks, key)) {
        json link = convert_link(*tier, 1.0, path + "/networks/" + key, issues);
        link["max_group_size"] = size;
        tiers.push_back(link);
      }
    }
    if (tiers.empty()) {
      issues.push_back({path + "/networks", "intra_with_pcie needs intra_node_pcie_* tiers"});
      return nullptr;
    }
    system["intra_node_tiers"] = tiers;
    json widest = tiers.back();
    widest.erase("max_group_size");
    system["intra_node"] = widest;
  } else if (const json* high = child(*networks, "high_intra_node")) {
    system["intra_node"] = convert_link(*high, 1.0, path + "/networks/high_intra_node", issues);
  } else {
    issues.push_back({path + "/networks", "expected high_intra_node or intra_node_pcie_* tiers"});
  }
  if (const json* inter = child(*networks, "inter_node")) {
    system["inter_node"] = convert_link(*inter, static_cast<double>(per_node),
                                        path + "/networks/inter_node", issues);
  } else {
    issues.push_back({path + "/networks/inter_node", "missing required key"});
  }
  if (flag(in, path, "FC8", issues)) {
    issues.push_back({path + "/FC8", "fully-connected 8-GPU bandwidth scaling is not supported"});
  }
  if (const std::string at = non_finite_at(system, ""); !at.empty()) {
    issues.push_back({path, "gives a non-finite value at /system" + at + " (a number is out of range)"});
  }
  return system;
}

}  // namespace trainsim::interop
