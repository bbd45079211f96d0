#include "memory/op_table.h"

#include <set>
#include <string>

namespace trainsim {
namespace {

std::string block_name(const Block& block, const BlockRun& run) {
  if (block.key == "E") return "embedding";
  if (block.key[0] == 'H') return "head";
  const int64_t last = run.first_layer + run.repeat * block.num_layers - 1;
  std::string name = "layers " + std::to_string(run.first_layer) + "-" + std::to_string(last);
  // 'O': saved activations offloaded to host memory (training.activation_offload_layers).
  return name + (block.moe ? " (moe" : " (dense") + (block.key[0] == 'O' ? ", offloaded)" : ")");
}

}  // namespace

std::vector<MemoryOpRow> memory_op_table(const ModelPlan& plan, size_t stage) {
  std::vector<MemoryOpRow> rows;
  if (stage >= plan.stages.size()) return rows;
  std::set<int32_t> seen;
  for (const ChunkPlan& chunk : plan.stages[stage]) {
    for (const BlockRun& run : chunk.runs) {
      if (!seen.insert(run.block).second) continue;
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      const std::string name = block_name(block, run);
      for (const Op& op : block.ops) {
        if (op.cache_bytes <= 0.0 && op.fwd_peak_bytes <= 0.0 && op.bwd_peak_bytes <= 0.0) continue;
        rows.push_back({name, op.name, op.recompute ? 0.0 : op.cache_bytes, op.fwd_peak_bytes,
                        op.bwd_peak_bytes});
      }
    }
  }
  return rows;
}

}  // namespace trainsim
