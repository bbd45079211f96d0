// The "system" section: GPU, links, efficiency. Human units in the document
// (GiB, GB/s, TFLOP/s, us), SI in the spec: each row's scale converts.
#include <string>

#include "input_limits.h"
#include "schema/config_schema.h"
#include "trainsim/units.h"

namespace trainsim::schema {

const Table<LinkSpec>& link_table(bool tier);  // link_schema.cpp
const Table<EfficiencySpec>& efficiency_table();

namespace {

constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kDefault = Presence::kDefault;
constexpr Presence kOptional = Presence::kOptional;
constexpr double kMaxTflops = 1e7;
constexpr double kMaxGbPerS = 1e7;

const Table<GpuSpec>& peak_table() {
  using P = Fields<GpuSpec>;
  static const Table<GpuSpec> table = {
      P::number("bf16", TRAINSIM_AT(peak_bf16_flops_per_s), kRequired, kMinRate, kMaxTflops, false, kTera,
                {"TFLOP/s", "BF16 TFLOP/s", "dense bf16 peak"}),
      P::number("fp16", TRAINSIM_AT(peak_fp16_flops_per_s), kRequired, kMinRate, kMaxTflops, false, kTera,
                {"TFLOP/s", "FP16 TFLOP/s", "dense fp16 peak"}),
      P::number("fp8", TRAINSIM_AT(peak_fp8_flops_per_s), kDefault, 0.0, kMaxTflops, false, kTera,
                {"TFLOP/s", "FP8 TFLOP/s", "dense fp8 peak; 0 = no fp8"}),
      P::number("fp4", TRAINSIM_AT(peak_fp4_flops_per_s), kDefault, 0.0, kMaxTflops, false, kTera,
                {"TFLOP/s", "FP4 TFLOP/s", "dense fp4 peak; > 0 marks block-scaled (MX / NV) tensor cores, which mxfp8 and nvfp4 need; 0 = none"}),
      P::rule([](ObjectReader& r, GpuSpec& gpu, const ReadContext&) {
        if (gpu.peak_fp4_flops_per_s > 0.0 && gpu.peak_fp4_flops_per_s < kMinRate * kTera) {
          r.issues().push_back({r.path_of("fp4"), "must be 0 (no fp4) or at least 1e-06, got " + r.raw("fp4")->dump()});
        }
        if (gpu.peak_fp8_flops_per_s > 0.0 && gpu.peak_fp8_flops_per_s < kMinRate * kTera) {
          r.issues().push_back({r.path_of("fp8"), "must be 0 (no fp8) or at least 1e-06, got " + r.raw("fp8")->dump()});
        }
      }),
  };
  return table;
}

const Table<GpuSpec>& gpu_table() {
  using G = Fields<GpuSpec>;
  static const Table<GpuSpec> table = {
      G::text("name", TRAINSIM_AT(name), {"", "GPU", "the GPU's name (not used by the estimate)"}),
      G::number("hbm_capacity_gib", TRAINSIM_AT(hbm_capacity_bytes), kRequired, kMinRate, 1e6, false, kGiB,
                {"GiB", "HBM (GiB)", "memory per GPU"}),
      G::number("hbm_bandwidth_gb_per_s", TRAINSIM_AT(hbm_bandwidth_bytes_per_s), kRequired, kMinRate, kMaxGbPerS,
                false, kGB, {"GB/s", "HBM GB/s", "memory bandwidth per GPU"}),
      G::object("peak_tflops", [](auto& g) -> auto& { return g; }, peak_table(), kRequired,
                {"", "Peak TFLOP/s", "dense peak per precision"}),
      G::number("usable_memory_mib", TRAINSIM_AT(usable_memory_bytes), kOptional, 1.0, 1e9, false, kMiB,
                {"MiB", "Usable memory (MiB)", "what PyTorch reports as the device's total memory (torch.cuda.mem_get_info()[1]), the figure out-of-memory is checked against; absent: hbm_capacity_gib"}),
      G::number("cuda_context_mib", TRAINSIM_AT(cuda_context_bytes), kOptional, 0.0, 1e6, false, kMiB,
                {"MiB", "CUDA context (MiB)", "CUDA context and kernel modules of a training process, outside PyTorch's allocator; absent: 512 MiB assumed"}),
      G::number("compute_capability", TRAINSIM_AT(compute_capability), kOptional, 1.0, 100.0, false, 1.0,
                {"", "Compute capability", "CUDA compute capability (9.0 = Hopper): cuBLAS workspace sizes; absent: Hopper's"}),
  };
  return table;
}

// Tiers of PCIe switches: links that serve groups up to max_group_size.
Field<SystemSpec> tiers_row() {
  using S = Fields<SystemSpec>;
  FieldInfo info = S::info("intra_node_tiers", Type::kArray, kOptional,
                           {"", "Intra-node tiers", "PCIe switch levels, each a link with max_group_size (smallest group first)"});
  info.items = Type::kObject;
  auto read = [](ObjectReader& r, SystemSpec& s, const ReadContext& context) {
    const nlohmann::json* tiers = r.raw("intra_node_tiers");
    if (tiers == nullptr) return;
    if (!tiers->is_array()) {
      r.issues().push_back({r.path_of("intra_node_tiers"), "expected array, got " + describe_json_value(*tiers)});
      return;
    }
    for (size_t i = 0; i < tiers->size(); ++i) {
      s.intra_node_tiers.emplace_back();
      read_object(link_table(true), (*tiers)[i], r.path_of("intra_node_tiers") + "/" + std::to_string(i),
                  s.intra_node_tiers.back(), r.issues(), context);
    }
  };
  auto write = [](const SystemSpec& s, nlohmann::json& out) {
    if (s.intra_node_tiers.empty()) return;
    nlohmann::json tiers = nlohmann::json::array();
    for (const LinkSpec& tier : s.intra_node_tiers) tiers.push_back(write_object(link_table(true), tier));
    out["intra_node_tiers"] = tiers;
  };
  return S::custom(info, read, write, describe(link_table(true)));
}

// {"<JSON pointer into system>": {"kind": ..., "source": ..., "cases": [...]}}
Field<SystemSpec> provenance_row() {
  using S = Fields<SystemSpec>;
  FieldInfo info = S::info("provenance", Type::kMap, kOptional,
                           {"", "Provenance", "where each figure comes from, by JSON pointer into the system (an ancestor covers its subtree): kind datasheet | measured | microbenchmark | fitted | assumed | config, source, and for fitted figures the cases"});
  info.items = Type::kObject;
  auto read = [](ObjectReader& r, SystemSpec& s, const ReadContext&) {
    const nlohmann::json* entries = r.raw("provenance");
    if (entries == nullptr) return;
    if (!entries->is_object()) {
      r.issues().push_back({r.path_of("provenance"), "expected object, got " + describe_json_value(*entries)});
      return;
    }
    for (const auto& [pointer, entry] : entries->items()) {
      const std::string path = r.path_of("provenance") + "/" + json_pointer_escape(pointer);
      if (pointer.empty() || pointer[0] != '/') {
        r.issues().push_back({path, "expected a JSON pointer into the system (\"/efficiency/gemm/bf16\") as the key"});
        continue;
      }
      ObjectReader e(entry, path, r.issues());
      if (!e.ok()) continue;
      Provenance p;
      p.kind = static_cast<ProvenanceKind>(e.enum_or("kind", provenance_kind_names().names, 5));
      if (!e.has("kind")) r.issues().push_back({e.path_of("kind"), "missing required key"});
      p.source = e.optional_string("source").value_or("");
      if (p.source.empty()) r.issues().push_back({e.path_of("source"), "missing required key"});
      if (const nlohmann::json* cases = e.raw("cases")) {
        if (!cases->is_array()) {
          r.issues().push_back({e.path_of("cases"), "expected array, got " + describe_json_value(*cases)});
        } else {
          for (const auto& c : *cases) {
            if (c.is_string()) p.cases.push_back(c.get<std::string>());
            else r.issues().push_back({e.path_of("cases"), "expected case ids (strings)"});
          }
        }
      }
      if (p.kind == ProvenanceKind::kFitted && p.cases.empty()) {
        r.issues().push_back({e.path_of("cases"), "a fitted figure names the cases it was fitted on"});
      }
      e.finish();
      s.provenance[pointer] = std::move(p);
    }
  };
  auto write = [](const SystemSpec& s, nlohmann::json& out) {
    if (s.provenance.empty()) return;
    nlohmann::json entries = nlohmann::json::object();
    for (const auto& [pointer, p] : s.provenance) {
      nlohmann::json entry = {{"kind", provenance_kind_names().of(p.kind)}, {"source", p.source}};
      if (!p.cases.empty()) entry["cases"] = p.cases;
      entries[pointer] = std::move(entry);
    }
    out["provenance"] = std::move(entries);
  };
  return S::custom(info, read, write);
}

// system.host: the host side of a GPU, for optimizer CPU offload. Human units in the
// document; all three capacities stated together or none.
const Table<HostMemorySpec>& host_table() {
  using H = Fields<HostMemorySpec>;
  static const Table<HostMemorySpec> table = {
      H::number("memory_gib_per_gpu", TRAINSIM_AT(memory_bytes), kOptional, kMinRate, 1e6, false, kGiB,
                {"GiB", "Host memory per GPU (GiB)", "the node's host DRAM over its GPUs"}),
      H::number("memory_bandwidth_gb_per_s_per_gpu", TRAINSIM_AT(memory_bandwidth_bytes_per_s), kOptional, kMinRate,
                kMaxGbPerS, false, kGB,
                {"GB/s", "Host memory GB/s per GPU", "the node's host DRAM bandwidth over its GPUs (a CPU optimizer step streams it)"}),
      H::number("memory_efficiency", TRAINSIM_AT(memory_efficiency), kOptional, 0.0, 1.0, true, 1.0,
                {"", "Host memory efficiency", "achieved fraction of the host bandwidth by the CPU Adam step; absent: 1"}),
      H::number("link_gb_per_s", TRAINSIM_AT(link_bandwidth_bytes_per_s), kOptional, kMinRate, kMaxGbPerS, false, kGB,
                {"GB/s", "Host link GB/s", "host <-> GPU link (PCIe, NVLink-C2C) per GPU and direction"}),
      H::number("link_efficiency", TRAINSIM_AT(link_efficiency), kOptional, 0.0, 1.0, true, 1.0,
                {"", "Host link efficiency", "achieved fraction of the host link by pinned copies; absent: 1"}),
      H::rule([](ObjectReader& r, HostMemorySpec& h, const ReadContext&) {
        const char* keys[] = {"memory_gib_per_gpu", "memory_bandwidth_gb_per_s_per_gpu", "link_gb_per_s"};
        int given = 0;
        for (const char* key : keys) given += r.has(key) ? 1 : 0;
        if (given == 0 || given == 3) return;
        for (const char* key : keys) {
          if (!r.has(key)) {
            r.issues().push_back({r.path_of(key), "missing: system.host states memory_gib_per_gpu, "
                                                  "memory_bandwidth_gb_per_s_per_gpu and link_gb_per_s together"});
          }
        }
        (void)h;
      }),
  };
  return table;
}

}  // namespace

const Table<SystemSpec>& system_table() {
  using S = Fields<SystemSpec>;
  static const Table<SystemSpec> table = {
      S::text("name", TRAINSIM_AT(name), {"", "Name", "the system's name (not used by the estimate)"}),
      S::integer("num_gpus", TRAINSIM_AT(num_gpus), kOptional, 1, kMaxGpus,
                 {"", "GPUs", "GPUs of the run; default tp*pp*dp*cp"}),
      S::integer("gpus_per_node", TRAINSIM_AT(gpus_per_node), kRequired, 1, 1 << 20,
                 {"", "GPUs per node", "GPUs that share the intra-node link"}),
      S::number("straggler_coefficient", TRAINSIM_AT(straggler_coefficient), kDefault, 0.0, 10.0, false, 1.0,
                {"", "Straggler coefficient", "multi-node slowdown 1 + x/(x+1)*c*sqrt(x), x = log2(nodes of a data-parallel group) (SimuMax); 0 = none"}),
      S::object("gpu", TRAINSIM_AT(gpu), gpu_table(), kRequired, {"", "GPU", "one accelerator"}),
      S::object("intra_node", TRAINSIM_AT(intra_node), link_table(false), kRequired,
                {"", "Intra-node link", "NVLink / PCIe inside a node, per GPU and direction"}),
      S::object("inter_node", TRAINSIM_AT(inter_node), link_table(false), kRequired,
                {"", "Inter-node link", "network between nodes, per GPU and direction"}),
      tiers_row(),
      S::object("efficiency", TRAINSIM_AT(efficiency), efficiency_table(), kRequired,
                {"", "Efficiency", "achieved fractions of peak per kernel class"}),
      S::object("host", TRAINSIM_AT(host), host_table(), kOptional,
                {"", "Host", "host memory, its bandwidth and the host link per GPU (optimizer CPU offload)"}),
      S::integer("nccl_channels", TRAINSIM_AT(nccl_channels), kDefault, 1, 1024,
                 {"", "NCCL channels", "channels of a collective communicator and per NVLink peer (NCCL buffers)"}),
      S::number("nvls_buffer_mib", TRAINSIM_AT(nvls_buffer_bytes), kDefault, 0.0, 1e6, false, kMiB,
                {"MiB", "NVLS buffers (MiB)", "NCCL NVLink SHARP buffers per intra-node communicator; 0 = no NVLS"}),
      provenance_row(),
  };
  return table;
}

}  // namespace trainsim::schema
