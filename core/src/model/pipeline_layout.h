// Which transformer layers each pipeline stage and virtual chunk holds,
// following Megatron-Core's get_transformer_layer_offset
// (megatron/core/transformer/transformer_layer.py) and
// --decoder-first/last-pipeline-num-layers (uneven first/last stages).
#pragma once

#include <cstdint>
#include <vector>

#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim {

struct ChunkLayers {
  int64_t first_layer = 0;  ///< global index of the chunk's first layer
  int64_t num_layers = 0;
};

// layout[stage][chunk]; chunk v of stage s runs after chunk v of stage s-1.
using PipelineLayout = std::vector<std::vector<ChunkLayers>>;

// Issues with the split (paths under /training). Empty when the split is valid.
Issues pipeline_layout_issues(int64_t num_layers, const ParallelSpec& parallel);

// The split; call only when pipeline_layout_issues() is empty.
PipelineLayout pipeline_layout(int64_t num_layers, const ParallelSpec& parallel);

}  // namespace trainsim
