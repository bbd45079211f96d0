#include "time/op_table.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "model/precision.h"

namespace trainsim {
namespace {

const char* kind_name(const Op& op) {
  switch (op.kind) {
    case OpKind::kEmbedding: return "embedding";
    case OpKind::kNorm: return "norm";
    case OpKind::kLinear: return "gemm";
    case OpKind::kRouter: return "router";
    case OpKind::kGroupedLinear: return "grouped_gemm";
    case OpKind::kAttention: return "attention";
    case OpKind::kActivation: return "activation";
    case OpKind::kPermutation: return "permute";
    case OpKind::kUnpermutation: return "unpermute";
    case OpKind::kQuantizer: return "quantize";
    case OpKind::kCrossEntropy: return "cross_entropy";
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kFree: return "view";
  }
  return "";
}

const char* kind_of(ProvenanceKind kind) {
  switch (kind) {
    case ProvenanceKind::kDatasheet: return "datasheet";
    case ProvenanceKind::kMeasured: return "measured";
    case ProvenanceKind::kMicrobenchmark: return "microbenchmark";
    case ProvenanceKind::kFitted: return "fitted";
    case ProvenanceKind::kAssumed: return "assumed";
    case ProvenanceKind::kConfig: return "config";
  }
  return "";
}

// The efficiency source of an op for the table: a measured table entry, the
// GEMM shape model, or the provenance kind of the figure it priced with.
std::string source_of(const OpTime& t, const SystemSpec& system) {
  if (t.flops[0] + t.flops[1] + t.flops[2] > 0.0 && !t.memory_bound) {
    if (t.source == EfficiencySource::kMeasuredTable) return "measured_table";
    if (t.source == EfficiencySource::kShapeModel) return "shape_model";
    const Provenance* p = figure_provenance(system, "/efficiency/attention");
    return p != nullptr ? kind_of(p->kind) : "config";
  }
  const Provenance* p = figure_provenance(system, "/efficiency/memory");
  return p != nullptr ? kind_of(p->kind) : "config";
}

}  // namespace

std::vector<OpTimeRow> stage_op_rows(const Config& config, const ModelPlan& plan,
                                     const std::vector<std::vector<OpTime>>& per_op,
                                     int64_t stage) {
  std::vector<OpTimeRow> rows;
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<double> compute_only;
  std::vector<double> peak;
  const GpuSpec& gpu = config.system.gpu;
  for (const ChunkPlan& chunk : plan.stages[static_cast<size_t>(stage)]) {
    for (const BlockRun& run : chunk.runs) {
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      const std::vector<OpTime>& times = per_op[static_cast<size_t>(run.block)];
      const double r = static_cast<double>(run.repeat);
      for (size_t i = 0; i < block.ops.size(); ++i) {
        const Op& op = block.ops[i];
        const OpTime& t = times[i];
        if (op.kind == OpKind::kFree && t.compute_s[0] + t.compute_s[1] + t.compute_s[2] <= 0.0) continue;
        const auto key = std::make_pair(std::string(op.name), std::string(kind_name(op)));
        auto it = index.find(key);
        if (it == index.end()) {
          it = index.emplace(key, rows.size()).first;
          OpTimeRow row;
          row.name = key.first;
          row.kind = key.second;
          row.efficiency_source = source_of(t, config.system);
          rows.push_back(row);
          compute_only.push_back(0.0);
          const bool gemm = op.kind == OpKind::kLinear || op.kind == OpKind::kGroupedLinear ||
                            op.kind == OpKind::kRouter;
          const GemmFormat format = gemm ? op.format : GemmFormat::kBf16;
          peak.push_back(format == GemmFormat::kBf16
                             ? (config.training.dtype == Dtype::kFp16 ? gpu.peak_fp16_flops_per_s
                                                                      : gpu.peak_bf16_flops_per_s)
                             : (format == GemmFormat::kNvfp4 ? gpu.peak_fp4_flops_per_s
                                                             : gpu.peak_fp8_flops_per_s));
        }
        OpTimeRow& row = rows[it->second];
        const double rerun = t.recompute_s > 0.0 ? 1.0 : 0.0;
        row.count += r;
        row.flops += r * (t.flops[0] + t.flops[1] + t.flops[2] + rerun * t.flops[0]);
        row.bytes += r * (t.bytes[0] + t.bytes[1] + t.bytes[2] + rerun * t.bytes[0]);
        row.kernels += r * (op.cost[0].kernels + op.cost[1].kernels + op.cost[2].kernels +
                            rerun * op.cost[0].kernels);
        row.time_s += r * (t.compute_s[0] + t.compute_s[1] + t.compute_s[2] + t.recompute_s);
        compute_only[it->second] += r * t.compute_only_s;
      }
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    OpTimeRow& row = rows[i];
    if (row.time_s <= 0.0) continue;
    // Compute-bound ops: achieved fraction of their peak; memory-bound ones:
    // achieved fraction of the HBM bandwidth.
    row.efficiency = row.flops > 0.0 && compute_only[i] > 0.0
                         ? row.flops / (row.time_s * peak[i])
                         : row.bytes / (row.time_s * gpu.hbm_bandwidth_bytes_per_s);
  }
  return rows;
}

Calibration calibration_of(const Config& config, const ModelPlan& plan,
                           const std::vector<std::vector<OpTime>>& per_op, bool host_waited) {
  FigureSet used;
  const HostSpec& host = config.system.efficiency.host;
  for (size_t b = 0; b < per_op.size() && b < plan.blocks.size(); ++b) {
    for (const OpTime& t : per_op[b]) {
      used |= t.figures;
      // The host figures shape the estimate only where the GPU waited for the host.
      if (!host_waited) continue;
      used |= t.host_figures;
      if (t.host_sync && host.sync_s > 0.0) used.set(static_cast<size_t>(Figure::kHostSync));
    }
  }
  Calibration out;
  for (size_t f = 0; f < kNumFigures; ++f) {
    if (!used.test(f)) continue;
    const std::string pointer = figure_pointer(static_cast<Figure>(f));
    const Provenance* p = figure_provenance(config.system, pointer);
    CalibrationFigure figure{pointer, p != nullptr ? kind_of(p->kind) : "config",
                             p != nullptr ? p->source : "given in the config, no provenance stated"};
    if (p == nullptr || p->kind == ProvenanceKind::kAssumed || p->kind == ProvenanceKind::kConfig) {
      out.calibrated = false;
    }
    out.figures.push_back(std::move(figure));
  }
  // The links the plan's collectives and transfers run on (time/collectives.h): the
  // node's link once a group has two members in a node, the inter-node fabric once the
  // job spans nodes. Their achieved bus-bandwidth fraction is a figure like the kernel
  // efficiencies: a link without a measured one runs at the preset's assumed fraction.
  const ParallelSpec& p = config.training.parallel;
  const int64_t world = p.tp * p.pp * p.dp * p.cp;
  const int64_t per_node = config.system.gpus_per_node;
  std::vector<std::string> links;
  if (std::min(world, per_node) > 1) {
    links.push_back(config.system.intra_node_tiers.empty() ? "/intra_node/efficiency"
                                                           : "/intra_node_tiers");
    // NCCL may run the node's all-reduces on NVLink SHARP (time/nccl_tuning.h).
    if (config.system.intra_node_tiers.empty() && config.training.nccl_nvls &&
        config.system.intra_node.nvls_all_reduce_efficiency > 0.0) {
      links.emplace_back("/intra_node/nvls_all_reduce_efficiency");
    }
  }
  if (world > per_node) links.emplace_back("/inter_node/efficiency");
  // Optimizer CPU offload prices the host link and the host's memory bandwidth.
  if (config.training.optimizer_offload_fraction > 0.0) {
    links.emplace_back("/host/link_gb_per_s");
    links.emplace_back("/host/link_efficiency");
    links.emplace_back("/host/memory_bandwidth_gb_per_s_per_gpu");
    links.emplace_back("/host/memory_efficiency");
  }
  for (const std::string& pointer : links) {
    const Provenance* prov = figure_provenance(config.system, pointer);
    if (prov == nullptr || prov->kind == ProvenanceKind::kAssumed || prov->kind == ProvenanceKind::kConfig) {
      out.calibrated = false;
    }
    out.figures.push_back({pointer, prov != nullptr ? kind_of(prov->kind) : "config",
                           prov != nullptr ? prov->source : "given in the config, no provenance stated"});
  }
  return out;
}

}  // namespace trainsim
