// "system" section of a config document.
#include "schema/config_reader.h"
#include "schema/json_reader.h"
#include "input_limits.h"
#include "trainsim/units.h"

namespace trainsim::schema {
namespace {

constexpr double kMaxTflops = 1e7;
constexpr double kMaxGbPerS = 1e7;
constexpr const char* kCollectiveNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                            "all_to_all", "p2p"};

void read_bandwidth_table(ObjectReader& r, const char* key, std::map<int64_t, double>& table) {
  const nlohmann::json* value = r.raw(key);
  if (value == nullptr) return;
  const std::string path = r.path_of(key);
  if (!value->is_object()) {
    r.issues().push_back({path, "expected object, got " + describe_json_value(*value)});
    return;
  }
  for (const auto& [size, bandwidth] : value->items()) {
    const std::string item = path + "/" + json_pointer_escape(size);
    int64_t group = 0;
    try {
      size_t used = 0;
      group = std::stoll(size, &used);
      if (used != size.size() || group < 2) group = 0;
    } catch (const std::exception&) {
      group = 0;
    }
    if (group == 0) {
      r.issues().push_back({item, "expected a group size (integer >= 2) as key"});
    } else if (!bandwidth.is_number() || bandwidth.get<double>() < kMinRate) {
      r.issues().push_back({item, "expected a number of at least 1e-06, got " + describe_json_value(bandwidth)});
    } else {
      table[group] = bandwidth.get<double>() * kGB;
    }
  }
}

void read_link(const nlohmann::json& value, const std::string& path, LinkSpec& link,
               bool tier, Issues& issues) {
  ObjectReader r(value, path, issues);
  link.bandwidth_bytes_per_s =
      r.required_number("bandwidth_gb_per_s", kMinRate, kMaxGbPerS, false) * kGB;
  link.latency_s = r.required_number("latency_us", 0.0, 1e6, false) * kMicro;
  link.efficiency = r.number_or("efficiency", 1.0, kMinRate, 1.0, false);
  if (tier) link.max_group_size = r.required_int("max_group_size", 1, kMaxGpus);
  if (const nlohmann::json* collectives = r.raw("collectives")) {
    ObjectReader c(*collectives, r.path_of("collectives"), issues);
    for (int i = 0; i < kNumCollectiveKinds; ++i) {
      const nlohmann::json* entry = c.raw(kCollectiveNames[i]);
      if (entry == nullptr) continue;
      ObjectReader e(*entry, c.path_of(kCollectiveNames[i]), issues);
      link.collectives[static_cast<size_t>(i)].efficiency =
          e.number_or("efficiency", 0.0, kMinRate, 10.0, false);
      link.collectives[static_cast<size_t>(i)].latency_s =
          e.optional_number("latency_us", 0.0, 1e6, false).value_or(-1e6) * kMicro;
      e.finish();
    }
    c.finish();
  }
  read_bandwidth_table(r, "dp_all_gather_gb_per_s", link.dp_all_gather_bytes_per_s);
  read_bandwidth_table(r, "dp_reduce_scatter_gb_per_s", link.dp_reduce_scatter_bytes_per_s);
  r.finish();
}

void read_gpu(const nlohmann::json& value, const std::string& path, GpuSpec& gpu,
              Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  gpu.name = r.optional_string("name").value_or("");
  gpu.hbm_capacity_bytes = r.required_number("hbm_capacity_gib", kMinRate, 1e6, false) * kGiB;
  gpu.hbm_bandwidth_bytes_per_s =
      r.required_number("hbm_bandwidth_gb_per_s", kMinRate, kMaxGbPerS, false) * kGB;
  if (const nlohmann::json* peaks = r.raw("peak_tflops")) {
    ObjectReader p(*peaks, r.path_of("peak_tflops"), issues);
    gpu.peak_bf16_flops_per_s = p.required_number("bf16", kMinRate, kMaxTflops, false) * kTera;
    gpu.peak_fp16_flops_per_s = p.required_number("fp16", kMinRate, kMaxTflops, false) * kTera;
    gpu.peak_fp8_flops_per_s = p.number_or("fp8", 0.0, 0.0, kMaxTflops, false) * kTera;
    if (gpu.peak_fp8_flops_per_s > 0.0 && gpu.peak_fp8_flops_per_s < kMinRate * kTera) {
      issues.push_back({p.path_of("fp8"), "must be 0 (no fp8) or at least 1e-06, got " + p.raw("fp8")->dump()});
    }
    p.finish();
  } else {
    issues.push_back({r.path_of("peak_tflops"), "missing required key"});
  }
  r.finish();
}

MemoryKernelSpec read_memory_kernel(ObjectReader& parent, const char* key,
                                    const MemoryKernelSpec* fallback) {
  MemoryKernelSpec spec = fallback != nullptr ? *fallback : MemoryKernelSpec{};
  const nlohmann::json* value = parent.raw(key);
  if (value == nullptr) {
    if (fallback == nullptr) parent.issues().push_back({parent.path_of(key), "missing required key"});
    return spec;
  }
  ObjectReader r(*value, parent.path_of(key), parent.issues());
  spec.efficiency = r.required_number("efficiency", kMinRate, 1.0, false);
  spec.latency_s = r.required_number("latency_us", 0.0, 1e6, false) * kMicro;
  r.finish();
  return spec;
}

void read_measured(const nlohmann::json& value, const std::string& path, EfficiencySpec& e,
                   Issues& issues) {
  ObjectReader r(value, path, issues);
  const std::pair<const char*, std::map<std::string, double>*> tables[] = {
      {"gemm", &e.measured_gemm},
      {"grouped_gemm", &e.measured_grouped_gemm},
      {"attention_forward", &e.measured_attention_forward},
      {"attention_backward", &e.measured_attention_backward}};
  for (const auto& [key, table] : tables) {
    const nlohmann::json* entries = r.raw(key);
    if (entries == nullptr) continue;
    if (!entries->is_object()) {
      issues.push_back({r.path_of(key), "expected object, got " + describe_json_value(*entries)});
      continue;
    }
    for (const auto& [shape, efficiency] : entries->items()) {
      if (efficiency.is_null()) continue;  // unmeasured shape: falls back like a miss
      if (!efficiency.is_number() || efficiency.get<double>() < kMinRate) {
        issues.push_back({r.path_of(key) + "/" + json_pointer_escape(shape),
                          "expected a number of at least 1e-06, got " + describe_json_value(efficiency)});
        continue;
      }
      (*table)[shape] = efficiency.get<double>();
    }
  }
  r.finish();
}

void read_efficiency(const nlohmann::json& value, const std::string& path, EfficiencySpec& e,
                     Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  e.gemm = r.required_number("gemm", kMinRate, 10.0, false);
  e.grouped_gemm = r.required_number("grouped_gemm", kMinRate, 10.0, false);
  e.attention_forward = r.required_number("attention_forward", kMinRate, 10.0, false);
  e.attention_backward = r.required_number("attention_backward", kMinRate, 10.0, false);
  e.fp8_gemm = r.number_or("fp8_gemm", e.gemm, kMinRate, 10.0, false);
  e.fp8_grouped_gemm = r.number_or("fp8_grouped_gemm", e.grouped_gemm, kMinRate, 10.0, false);
  e.gemm_half_size = r.number_or("gemm_half_size", 0.0, 0.0, 1e9, false);
  e.num_sms = r.int_or("num_sms", 0, 0, 1 << 20);
  e.tile_m = r.int_or("tile_m", 128, 1, 1 << 16);
  e.tile_n = r.int_or("tile_n", 128, 1, 1 << 16);
  e.memory = read_memory_kernel(r, "memory", nullptr);
  e.permute = read_memory_kernel(r, "permute", &e.memory);
  e.cross_entropy = read_memory_kernel(r, "cross_entropy", &e.memory);
  e.cross_entropy_fused = read_memory_kernel(r, "cross_entropy_fused", &e.memory);
  if (const nlohmann::json* measured = r.raw("measured")) {
    read_measured(*measured, r.path_of("measured"), e, issues);
  }
  r.finish();
}

}  // namespace

void read_system(const nlohmann::json& value, const std::string& path, SystemSpec& system,
                 Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  system.name = r.optional_string("name").value_or("");
  system.num_gpus = r.optional_int("num_gpus", 1, kMaxGpus).value_or(0);
  system.gpus_per_node = r.required_int("gpus_per_node", 1, 1 << 20);
  system.straggler_coefficient = r.number_or("straggler_coefficient", 0.0, 0.0, 10.0, false);
  if (const nlohmann::json* gpu = r.raw("gpu")) {
    read_gpu(*gpu, r.path_of("gpu"), system.gpu, issues);
  } else {
    issues.push_back({r.path_of("gpu"), "missing required key"});
  }
  for (const char* key : {"intra_node", "inter_node"}) {
    LinkSpec& link = std::string(key) == "intra_node" ? system.intra_node : system.inter_node;
    if (const nlohmann::json* link_value = r.raw(key)) {
      read_link(*link_value, r.path_of(key), link, false, issues);
    } else {
      issues.push_back({r.path_of(key), "missing required key"});
    }
  }
  if (const nlohmann::json* tiers = r.raw("intra_node_tiers")) {
    if (!tiers->is_array()) {
      issues.push_back({r.path_of("intra_node_tiers"),
                        "expected array, got " + describe_json_value(*tiers)});
    } else {
      for (size_t i = 0; i < tiers->size(); ++i) {
        system.intra_node_tiers.emplace_back();
        read_link((*tiers)[i], r.path_of("intra_node_tiers") + "/" + std::to_string(i),
                  system.intra_node_tiers.back(), true, issues);
      }
    }
  }
  if (const nlohmann::json* efficiency = r.raw("efficiency")) {
    read_efficiency(*efficiency, r.path_of("efficiency"), system.efficiency, issues);
  } else {
    issues.push_back({r.path_of("efficiency"), "missing required key"});
  }
  r.finish();
}

}  // namespace trainsim::schema
