#include "model/pipeline_layout.h"

#include <string>

namespace trainsim {
namespace {

// Layers per stage, before splitting into virtual chunks. Returns an empty
// vector and fills issues when the split is impossible.
std::vector<int64_t> layers_per_stage(int64_t num_layers, const ParallelSpec& p, Issues* issues) {
  auto fail = [&](const char* path, const std::string& message) {
    if (issues != nullptr) issues->push_back({path, message});
    return std::vector<int64_t>{};
  };
  const bool has_first = p.num_layers_in_first_stage.has_value();
  const bool has_last = p.num_layers_in_last_stage.has_value();
  const int64_t first = p.num_layers_in_first_stage.value_or(0);
  const int64_t last = p.num_layers_in_last_stage.value_or(0);
  if (p.pp == 1) return {num_layers};
  if ((has_first || has_last) &&
      (p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split)) {
    return fail("/training/account_for_embedding_in_pipeline_split",
                "cannot be combined with num_layers_in_first/last_stage");
  }
  // --account-for-embedding/loss-in-pipeline-split: the embedding (loss) takes
  // the place of one layer of the first (last) stage.
  const int64_t embedding_slot = p.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int64_t loss_slot = p.account_for_loss_in_pipeline_split ? 1 : 0;
  const int64_t fixed = first + last;
  if (fixed > num_layers) {
    return fail("/training/num_layers_in_first_stage",
                "first and last stage layers (" + std::to_string(fixed) +
                    ") exceed num_layers (" + std::to_string(num_layers) + ")");
  }
  const int64_t other_stages = p.pp - (has_first ? 1 : 0) - (has_last ? 1 : 0);
  const int64_t other_layers = num_layers - fixed + embedding_slot + loss_slot;
  if (other_stages == 0 && other_layers != 0) {
    return fail("/training/num_layers_in_last_stage",
                "first + last stage layers must equal num_layers (" + std::to_string(num_layers) +
                    ") when pp is 2, got " + std::to_string(fixed));
  }
  if (other_stages > 0 && other_layers % other_stages != 0) {
    const bool uneven = has_first || has_last;
    return fail(uneven ? "/training/num_layers_in_first_stage" : "/training/pp",
                uneven ? "the remaining " + std::to_string(other_layers) +
                             " layers must divide evenly over the other " +
                             std::to_string(other_stages) + " stages"
                       : "must divide num_layers (" + std::to_string(other_layers) + "), got " +
                             std::to_string(p.pp));
  }
  const int64_t per_other = other_stages > 0 ? other_layers / other_stages : 0;
  std::vector<int64_t> stages(static_cast<size_t>(p.pp), per_other);
  if (has_first) stages.front() = first;
  if (has_last) stages.back() = last;
  stages.front() -= embedding_slot;
  stages.back() -= loss_slot;
  if (stages.front() < 0 || stages.back() < 0) {
    return fail("/training/pp", "leaves no layer slot for the embedding or the loss");
  }
  for (size_t i = 0; i < stages.size(); ++i) {
    // The embedding / loss slot sits in the first / last virtual chunk.
    const int64_t slots = (i == 0 ? embedding_slot : 0) + (i + 1 == stages.size() ? loss_slot : 0);
    const int64_t layers = stages[i] + slots;
    if (layers % p.vpp != 0) {
      return fail("/training/vpp", "must divide the layers of every stage (" +
                                       std::to_string(layers) + "), got " +
                                       std::to_string(p.vpp));
    }
  }
  return stages;
}

}  // namespace

Issues pipeline_layout_issues(int64_t num_layers, const ParallelSpec& parallel) {
  Issues issues;
  layers_per_stage(num_layers, parallel, &issues);
  return issues;
}

PipelineLayout pipeline_layout(int64_t num_layers, const ParallelSpec& parallel) {
  const std::vector<int64_t> stages = layers_per_stage(num_layers, parallel, nullptr);
  TRAINSIM_CHECK(!stages.empty(), "pipeline_layout called on an invalid split");
  PipelineLayout layout(stages.size());
  // Interleaved order: chunk v of every stage, then chunk v+1 (Megatron's
  // virtual pipeline places model chunk v of stage s at global position
  // v * pp + s).
  const int64_t embedding_slot = parallel.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int64_t loss_slot = parallel.account_for_loss_in_pipeline_split ? 1 : 0;
  int64_t next_layer = 0;
  for (int64_t chunk = 0; chunk < parallel.vpp; ++chunk) {
    for (size_t stage = 0; stage < stages.size(); ++stage) {
      const bool first_slot = stage == 0 && chunk == 0;
      const bool last_slot = stage + 1 == stages.size() && chunk + 1 == parallel.vpp;
      const int64_t slots = (stage == 0 ? embedding_slot : 0) +
                            (stage + 1 == stages.size() ? loss_slot : 0);
      int64_t layers = (stages[stage] + slots) / parallel.vpp;
      if (first_slot) layers -= embedding_slot;
      if (last_slot) layers -= loss_slot;
      layout[stage].push_back({next_layer, layers});
      next_layer += layers;
    }
  }
  return layout;
}

}  // namespace trainsim
