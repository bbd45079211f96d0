// The whole model as distinct op blocks and, per pipeline stage and virtual
// chunk, the runs of blocks that make it up. Identical layers share one block
// (built and walked once), which keeps an estimate of a 100+-layer model
// cheap: a chunk of 80 identical layers is one run of 80 repeats.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "model/activation_walk.h"
#include "model/op.h"
#include "model/pipeline_layout.h"
#include "trainsim/spec.h"

namespace trainsim {

struct Block {
  std::string key;        ///< identity: kind and per-layer variant codes
  OpList ops;
  int64_t num_layers = 0;  ///< transformer layers inside (0: embedding or head)
  bool moe = false;        ///< contains a MoE layer
  /// Activation CPU offload (training.activation_offload_layers): the saved bytes of one
  /// micro-batch that this block's layers copy to host memory in the forward and back in the
  /// backward. Its ops then save nothing on the GPU (cache_bytes 0), so the walk, the stage
  /// memory and the allocation trace all see the activations leave HBM.
  double offloaded_bytes = 0.0;
  BlockWalk walk;
};

struct BlockRun {
  int32_t block = 0;
  int64_t repeat = 1;
  int64_t first_layer = 0;  ///< global index of the run's first layer (-1: embedding/head)
};

struct ChunkPlan {
  std::vector<BlockRun> runs;
  int64_t num_layers = 0;
};

struct ModelPlan {
  PipelineLayout layout;
  std::vector<std::shared_ptr<const Block>> blocks;  ///< may be shared with a BlockCache
  std::vector<std::vector<ChunkPlan>> stages;        ///< [stage][virtual chunk]
};

// Blocks and chunk plans kept across plans, so that each distinct block is
// built and walked once and each distinct chunk laid out once (the strategy
// search). A block depends on the model and on the training fields the op
// builders read (micro-batch size, seq_len, dtype, tp, cp, ep, etp, sequence
// parallelism, recompute granularity and modules, kernels, TE version, MoE
// options), never on pp, vpp, dp, the stage split, the ZeRO stage or the
// number of micro-batches (those only place and repeat blocks; the head block's
// weights depend on pp and its key says which). Whoever reuses
// a cache must keep the former fixed. With a cache, a plan's block ids are the
// cache's and plan.blocks lists every block the cache holds.
struct BlockCache {
  std::vector<std::shared_ptr<const Block>> blocks;  ///< by id
  std::unordered_map<std::string, int32_t> ids;      ///< Block::key -> id
  /// (first layer, layers, embedding, tail: head 0 none / 1 tied / 2 own weight, + 4 with
  /// MTP layers, + 8 when they keep a copy of the embeddings, recompute num_layers,
  /// activation-offloaded layers) -> the chunk's runs
  std::map<std::tuple<int64_t, int64_t, bool, int, int64_t, int64_t>, ChunkPlan> chunks;
};

ModelPlan build_model_plan(const Config& config, BlockCache* cache = nullptr);

}  // namespace trainsim
