// One plan of a strategy search: the degrees, micro-batching, stage split,
// recompute mode, ZeRO stage and choice keys that vary between candidates.
// Everything else comes from the SearchSpec, so a candidate is a few integers.
#pragma once

#include <array>
#include <cstdint>

#include "search/search_spec.h"
#include "trainsim/spec.h"

namespace trainsim {

struct Candidate {
  int32_t num_gpus = 0;
  int32_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1, vpp = 1;
  int32_t micro_batch_size = 1;
  int32_t num_micro_batches = 1;
  int32_t first_stage_layers = 0;  ///< with last_stage_layers: uneven split; 0 = even
  int32_t last_stage_layers = 0;
  int32_t recompute_num_layers = 0;  ///< the mode's num_layers, resolved for this layout
  int16_t recompute = 0;             ///< index into SearchSpec::recompute
  int8_t zero_stage = 1;
  bool sequence_parallel = false;
  /// Per choice dimension (choices.h): the index of its value in SearchSpec::choices.
  std::array<int8_t, kMaxChoiceDimensions> choice{};
};

// The fields every candidate shares: model, system and the training template.
Config base_config(const SearchSpec& spec);

// Writes the candidate's fields into a config made by base_config (any earlier
// candidate's fields are overwritten, so one Config serves a whole search).
void apply_candidate(const SearchSpec& spec, const Candidate& candidate, Config& config);

}  // namespace trainsim
