#include "model/model_plan.h"

#include <map>

#include "model/layer_ops.h"
#include "model/op_context.h"
#include "model/param_count.h"
#include "model/recompute_flags.h"

namespace trainsim {
namespace {

class PlanBuilder {
 public:
  PlanBuilder(const Config& config, ModelPlan& plan)
      : config_(config), ctx_(config.model, config.training), factory_(ctx_), plan_(plan) {}

  ChunkPlan chunk(const ChunkLayers& layers, bool embedding, bool head) {
    ChunkPlan chunk;
    chunk.num_layers = layers.num_layers;
    if (embedding) add_run(chunk, block_for("E", -1, {}), 1, -1);
    const RecomputeSpec& recompute = config_.training.recompute;
    int64_t i = 0;
    while (i < layers.num_layers) {
      // A block runs from a segment-starting layer to the next one.
      int64_t end = i + 1;
      while (end < layers.num_layers &&
             !layer_recompute(recompute, end, layers.num_layers).starts_segment) {
        ++end;
      }
      std::string key = "L";
      std::vector<int64_t> indices;
      for (int64_t j = i; j < end; ++j) {
        const LayerRecompute rc = layer_recompute(recompute, j, layers.num_layers);
        const bool moe = is_moe_layer(config_.model, layers.first_layer + j);
        const bool active = rc.active();
        key += static_cast<char>('a' + (moe ? 1 : 0) + (active ? 2 : 0) +
                                 (rc.starts_segment ? 4 : 0));
        indices.push_back(j);
      }
      add_run(chunk, block_for(key, layers.first_layer + i, indices, layers.num_layers),
              1, layers.first_layer + i);
      i = end;
    }
    if (head) {
      const bool holds = !config_.model.tie_embeddings || config_.training.parallel.pp > 1;
      add_run(chunk, block_for(holds ? "H1" : "H0", -1, {}), 1, -1);
    }
    return chunk;
  }

 private:
  static void add_run(ChunkPlan& chunk, int32_t block, int64_t repeat, int64_t first_layer) {
    if (!chunk.runs.empty() && chunk.runs.back().block == block && first_layer >= 0) {
      chunk.runs.back().repeat += repeat;
      return;
    }
    chunk.runs.push_back({block, repeat, first_layer});
  }

  int32_t block_for(const std::string& key, int64_t first_global, const std::vector<int64_t>& indices,
                    int64_t chunk_layers = 0) {
    const auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    Block block;
    block.key = key;
    if (key == "E") {
      append_embedding_ops(block.ops, factory_);
    } else if (key[0] == 'H') {
      append_head_ops(block.ops, factory_, key == "H1");
    } else {
      for (size_t n = 0; n < indices.size(); ++n) {
        const int64_t global = first_global + static_cast<int64_t>(n);
        const bool moe = is_moe_layer(config_.model, global);
        block.moe = block.moe || moe;
        append_layer_ops(block.ops, factory_, moe,
                         layer_recompute(config_.training.recompute, indices[n], chunk_layers));
      }
      block.num_layers = static_cast<int64_t>(indices.size());
    }
    block.walk = walk_block(block.ops);
    const auto id = static_cast<int32_t>(plan_.blocks.size());
    plan_.blocks.push_back(std::move(block));
    index_.emplace(key, id);
    return id;
  }

  const Config& config_;
  OpContext ctx_;
  OpFactory factory_;
  ModelPlan& plan_;
  std::map<std::string, int32_t> index_;
};

}  // namespace

ModelPlan build_model_plan(const Config& config) {
  ModelPlan plan;
  const ParallelSpec& p = config.training.parallel;
  plan.layout = pipeline_layout(config.model.num_layers, p);
  PlanBuilder builder(config, plan);
  plan.stages.resize(plan.layout.size());
  for (size_t stage = 0; stage < plan.layout.size(); ++stage) {
    const auto& chunks = plan.layout[stage];
    for (size_t v = 0; v < chunks.size(); ++v) {
      const bool embedding = stage == 0 && v == 0;
      const bool head = stage + 1 == plan.layout.size() && v + 1 == chunks.size();
      plan.stages[stage].push_back(builder.chunk(chunks[v], embedding, head));
    }
  }
  return plan;
}

}  // namespace trainsim
