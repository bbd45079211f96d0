#include "model/model_plan.h"

#include <unordered_map>

#include "model/attention_window.h"
#include "model/layer_ops.h"
#include "model/op_context.h"
#include "model/param_count.h"
#include "model/recompute_flags.h"

namespace trainsim {
namespace {

class PlanBuilder {
 public:
  PlanBuilder(const Config& config, ModelPlan& plan, BlockCache* cache)
      : config_(config), ctx_(config.model, config.training), factory_(ctx_), plan_(plan),
        cache_(cache) {}

  ChunkPlan chunk(const ChunkLayers& layers) {
    ChunkPlan chunk;
    chunk.num_layers = layers.num_layers;
    if (layers.embedding) add_run(chunk, block_for("E", -1, {}), 1, -1);
    const RecomputeSpec& recompute = config_.training.recompute;
    recompute_.clear();
    recompute_.reserve(static_cast<size_t>(layers.num_layers));
    for (int64_t j = 0; j < layers.num_layers; ++j) {
      recompute_.push_back(layer_recompute(recompute, j, layers.num_layers));
    }
    std::string previous_key;
    int32_t previous_block = -1;
    int64_t i = 0;
    // Activation CPU offload (Transformer Engine transformer_engine/pytorch/cpu_offload.py,
    // DefaultOffloadSynchronizer): the first N layers of the block are offloaded, counted by
    // the layers' forwards; Megatron-LM builds one TransformerBlock of all layers (pp 1,
    // megatron/core/transformer/transformer_block.py), so they are the model's first N.
    const int64_t offloaded = config_.training.activation_offload_layers;
    while (i < layers.num_layers) {
      // A block runs from a segment-starting layer to the next one (and an offloaded layer
      // never shares a block with a kept one).
      int64_t end = i + 1;
      while (end < layers.num_layers && !recompute_[static_cast<size_t>(end)].starts_segment &&
             layers.first_layer + end != offloaded) {
        ++end;
      }
      key_ = layers.first_layer + i < offloaded ? "O" : "L";
      for (int64_t j = i; j < end; ++j) {
        const LayerRecompute& rc = recompute_[static_cast<size_t>(j)];
        const bool moe = is_moe_layer(config_.model, layers.first_layer + j);
        const bool window = is_window_layer(config_.model, layers.first_layer + j);
        const bool active = rc.active();
        key_ += static_cast<char>('a' + (moe ? 1 : 0) + (active ? 2 : 0) +
                                  (rc.starts_segment ? 4 : 0) + (window ? 8 : 0));
      }
      // Runs of identical layers repeat the previous block without a lookup.
      if (key_ != previous_key) {
        previous_block = block_for(key_, layers.first_layer + i, i, end);
        previous_key = key_;
      }
      add_run(chunk, previous_block, 1, layers.first_layer + i);
      i = end;
    }
    // "M0"/"M1": the multi-token-prediction layers (1: with their copy of the
    // word embeddings), in the head block ("H1M0"...) when the loss is in the
    // same chunk, else alone (a standalone MTP stage of a pipeline layout).
    const std::string mtp =
        layers.mtp_layers == 0
            ? ""
            : (mtp_holds_embedding_copy(config_.model, config_.training.parallel.pp) ? "M1" : "M0");
    if (layers.loss) {
      const bool holds = !config_.model.tie_embeddings || config_.training.parallel.pp > 1;
      add_run(chunk, block_for((holds ? "H1" : "H0") + mtp, -1, {}), 1, -1);
    } else if (!mtp.empty()) {
      add_run(chunk, block_for(mtp, -1, {}), 1, -1);
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

  // The block of layers [begin, end) of the current chunk (recompute_ holds
  // their flags), or the embedding ("E") / head ("H0", "H1", with MTP "H1M0"...).
  int32_t block_for(const std::string& key, int64_t first_global, int64_t begin = 0,
                    int64_t end = 0) {
    auto& index = cache_ != nullptr ? cache_->ids : index_;
    auto& blocks = cache_ != nullptr ? cache_->blocks : plan_.blocks;
    const auto it = index.find(key);
    if (it != index.end()) return it->second;
    const auto id = static_cast<int32_t>(blocks.size());
    blocks.push_back(std::make_shared<const Block>(make_block(key, first_global, begin, end)));
    index.emplace(key, id);
    return id;
  }

  Block make_block(const std::string& key, int64_t first_global, int64_t begin, int64_t end) {
    Block block;
    block.key = key;
    if (key == "E") {
      append_embedding_ops(block.ops, factory_);
    } else if (key[0] == 'H' || key[0] == 'M') {
      const ModelSpec& m = config_.model;
      const size_t mtp = key.find('M');
      if (mtp != std::string::npos) {
        const int64_t last = m.num_layers - 1;
        block.moe = is_moe_layer(m, last);
        append_mtp_ops(block.ops, factory_, block.moe,
                       layer_attention_fraction(m, last, config_.training.seq_len),
                       key[mtp + 1] == '1', layer_recompute(config_.training.recompute, 0, 1));
      }
      if (key[0] == 'H') append_head_ops(block.ops, factory_, key[1] == '1');
    } else {
      for (int64_t j = begin; j < end; ++j) {
        const int64_t layer = first_global + (j - begin);
        const bool moe = is_moe_layer(config_.model, layer);
        block.moe = block.moe || moe;
        append_layer_ops(block.ops, factory_, moe, recompute_[static_cast<size_t>(j)],
                         layer_attention_fraction(config_.model, layer, config_.training.seq_len));
      }
      block.num_layers = end - begin;
    }
    block.walk = walk_block(block.ops);
    if (key[0] == 'O') {
      // An offloaded layer: what its forward saves goes to pinned host memory (every saved
      // tensor that is not a parameter, cpu_offload.py OffloadableLayerState; TE keeps tensors
      // under 256K elements on the GPU, small norm / softmax statistics that are counted here
      // as offloaded). The GPU copy is released before the forward ends and the reload's
      // buffers replace the next-used layer's in the backward, so the layer saves nothing on
      // the GPU at the step's activation peak (the get_cpu_offload_context notes: saved
      // activations peak at (num_layers - num_offloaded_layers) x one layer).
      block.offloaded_bytes = block.walk.stored_bytes;
      for (Op& op : block.ops) op.cache_bytes = 0.0;
      block.walk = walk_block(block.ops);
    }
    return block;
  }

  const Config& config_;
  OpContext ctx_;
  OpFactory factory_;
  ModelPlan& plan_;
  BlockCache* cache_;
  std::unordered_map<std::string, int32_t> index_;  ///< without a cache: key -> plan block id
  std::vector<LayerRecompute> recompute_;  ///< per layer of the chunk being planned
  std::string key_;
};

}  // namespace

ModelPlan build_model_plan(const Config& config, BlockCache* cache) {
  ModelPlan plan;
  const ParallelSpec& p = config.training.parallel;
  plan.layout = pipeline_layout(config.model, p);
  PlanBuilder builder(config, plan, cache);
  plan.stages.resize(plan.layout.size());
  // The chunk cache's key for what follows the layers: 1 tied / 2 own output
  // weight, + 4 with MTP layers, + 8 when they keep an embedding copy.
  const int output_weight = !config.model.tie_embeddings || p.pp > 1 ? 2 : 1;
  const int mtp_copy = mtp_holds_embedding_copy(config.model, p.pp) ? 8 : 0;
  for (size_t stage = 0; stage < plan.layout.size(); ++stage) {
    const auto& chunks = plan.layout[stage];
    plan.stages[stage].reserve(chunks.size());
    for (const ChunkLayers& layers : chunks) {
      if (cache == nullptr) {
        plan.stages[stage].push_back(builder.chunk(layers));
        continue;
      }
      const int tail = (layers.loss ? output_weight : 0) + (layers.mtp_layers > 0 ? 4 + mtp_copy : 0);
      const auto key = std::make_tuple(layers.first_layer, layers.num_layers, layers.embedding, tail,
                                       config.training.recompute.num_layers,
                                       config.training.activation_offload_layers);
      auto it = cache->chunks.find(key);
      if (it == cache->chunks.end()) {
        it = cache->chunks.emplace(key, builder.chunk(layers)).first;
      }
      plan.stages[stage].push_back(it->second);
    }
  }
  if (cache != nullptr) plan.blocks = cache->blocks;
  return plan;
}

}  // namespace trainsim
