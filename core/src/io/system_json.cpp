// "system" section of a config document.
#include "io/config_json.h"
#include "io/json_reader.h"
#include "io/limits.h"
#include "trainsim/units.h"

namespace trainsim::io {
namespace {

constexpr double kMaxTflops = 1e7;
constexpr double kMaxGbPerS = 1e7;

void read_link(const nlohmann::json& value, const std::string& path, LinkSpec& link,
               Issues& issues) {
  ObjectReader r(value, path, issues);
  link.bandwidth_bytes_per_s =
      r.required_number("bandwidth_gb_per_s", 0.0, kMaxGbPerS, true) * kGB;
  link.latency_s = r.required_number("latency_us", 0.0, 1e6, false) * kMicro;
  r.finish();
}

void read_gpu(const nlohmann::json& value, const std::string& path, GpuSpec& gpu,
              Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  gpu.name = r.optional_string("name").value_or("");
  gpu.hbm_capacity_bytes = r.required_number("hbm_capacity_gib", 0.0, 1e6, true) * kGiB;
  gpu.hbm_bandwidth_bytes_per_s =
      r.required_number("hbm_bandwidth_gb_per_s", 0.0, kMaxGbPerS, true) * kGB;
  if (const nlohmann::json* peaks = r.raw("peak_tflops")) {
    ObjectReader p(*peaks, r.path_of("peak_tflops"), issues);
    gpu.peak_bf16_flops_per_s = p.required_number("bf16", 0.0, kMaxTflops, true) * kTera;
    gpu.peak_fp16_flops_per_s = p.required_number("fp16", 0.0, kMaxTflops, true) * kTera;
    gpu.peak_fp8_flops_per_s = p.number_or("fp8", 0.0, 0.0, kMaxTflops, false) * kTera;
    p.finish();
  } else {
    issues.push_back({r.path_of("peak_tflops"), "missing required key"});
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
  if (const nlohmann::json* gpu = r.raw("gpu")) {
    read_gpu(*gpu, r.path_of("gpu"), system.gpu, issues);
  } else {
    issues.push_back({r.path_of("gpu"), "missing required key"});
  }
  for (const char* key : {"intra_node", "inter_node"}) {
    LinkSpec& link = std::string(key) == "intra_node" ? system.intra_node : system.inter_node;
    if (const nlohmann::json* link_value = r.raw(key)) {
      read_link(*link_value, r.path_of(key), link, issues);
    } else {
      issues.push_back({r.path_of(key), "missing required key"});
    }
  }
  r.finish();
}

}  // namespace trainsim::io
