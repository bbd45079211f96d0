// Which transformer layers (and embedding, MTP layers, loss) each pipeline rank
// and local chunk holds.
//
// The model is first cut into pp * vpp virtual stages in model order, from
// either
//   - Megatron-LM's --pipeline-model-parallel-layout (ParallelSpec::layout;
//     megatron/core/transformer/pipeline_parallel_layer_layout.py), or
//   - the even split with --decoder-first/last-pipeline-num-layers and the
//     --account-for-embedding/loss-in-pipeline-split slots (Megatron-Core
//     get_transformer_layer_offset / get_num_layers_to_build,
//     megatron/core/transformer/transformer_layer.py, transformer_block.py);
// then the schedule places the virtual stages on (rank, chunk): Megatron's
// stage k on rank k % pp, chunk k / pp; the V shapes (zero_bubble_v,
// dualpipe_v) stage r and 2pp - 1 - r on rank r; DualPipe both directions of a
// pp-way split, stage r and pp - 1 - r on rank r (DeepSeek-V3 report Table 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim {

struct ChunkLayers {
  int64_t first_layer = 0;  ///< global index of the chunk's first layer
  int64_t num_layers = 0;
  bool embedding = false;   ///< holds the word embedding (first virtual stage)
  int64_t mtp_layers = 0;   ///< multi-token-prediction layers after its decoder layers
  bool loss = false;        ///< final norm, output layer and loss (last virtual stage)
  int32_t virtual_stage = 0;  ///< position in model order
};

// layout[rank][chunk]; a chunk's micro-batch comes from the previous virtual stage.
using PipelineLayout = std::vector<std::vector<ChunkLayers>>;

// Megatron's layout grammar: stages split by '|', 'E' embedding, 't' decoder
// layer, 'm' MTP layer, 'L' loss, ',' ignored, "(...)*n" then "x*n" unrolled
// (parse_str_to_list). Empty optional and *error set when malformed; the
// counts are checked by pipeline_layout_issues().
std::optional<std::vector<LayoutStage>> parse_pipeline_layout(std::string_view text,
                                                              std::string* error);
// The same layout written back in that grammar, runs of equal stages folded
// into "(...|)*n" (parse_pipeline_layout(format_pipeline_layout(x)) == x).
std::string format_pipeline_layout(const std::vector<LayoutStage>& stages);

// Model chunks per rank the schedule keeps (2 for DualPipe and the V shapes).
int64_t chunks_per_rank(const ParallelSpec& parallel);
// [rank][chunk] -> virtual stage in model order (see the header comment).
std::vector<std::vector<int32_t>> chunk_virtual_stages(const ParallelSpec& parallel);

// Issues with the split (paths under /training). Empty when the split is valid.
Issues pipeline_layout_issues(const ModelSpec& model, const ParallelSpec& parallel);

// The split; call only when pipeline_layout_issues() is empty.
PipelineLayout pipeline_layout(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace trainsim
