#include "model/pipeline_layout.h"

#include <string>

namespace trainsim {
namespace {

std::string str(int64_t value) { return std::to_string(value); }

bool megatron_placement(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kOneFOneB || schedule == PipelineSchedule::kZeroBubbleH1 ||
         schedule == PipelineSchedule::kZeroBubbleH2;
}

// Layers per rank of the derived split, before splitting into virtual chunks.
// Returns an empty vector and fills issues when the split is impossible.
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
                "first and last stage layers (" + str(fixed) + ") exceed num_layers (" +
                    str(num_layers) + ")");
  }
  const int64_t other_stages = p.pp - (has_first ? 1 : 0) - (has_last ? 1 : 0);
  const int64_t other_layers = num_layers - fixed + embedding_slot + loss_slot;
  if (other_stages == 0 && other_layers != 0) {
    return fail("/training/num_layers_in_last_stage",
                "first + last stage layers must equal num_layers (" + str(num_layers) +
                    ") when pp is 2, got " + str(fixed));
  }
  if (other_stages > 0 && other_layers % other_stages != 0) {
    const bool uneven = has_first || has_last;
    return fail(uneven ? "/training/num_layers_in_first_stage" : "/training/pp",
                uneven ? "the remaining " + str(other_layers) +
                             " layers must divide evenly over the other " + str(other_stages) +
                             " stages"
                       : "must divide num_layers (" + str(other_layers) + "), got " + str(p.pp));
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
      return fail("/training/vpp", "must divide the layers of every stage (" + str(layers) +
                                       "), got " + str(p.vpp));
    }
  }
  return stages;
}

// The derived split as virtual stages in model order: Megatron's virtual
// pipeline places model chunk v of rank s at position v * pp + s.
std::vector<LayoutStage> derived_stages(const ModelSpec& model, const ParallelSpec& p,
                                        const std::vector<int64_t>& ranks) {
  const int64_t embedding_slot = p.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int64_t loss_slot = p.account_for_loss_in_pipeline_split ? 1 : 0;
  std::vector<LayoutStage> stages;
  stages.reserve(static_cast<size_t>(p.pp * p.vpp));
  for (int64_t chunk = 0; chunk < p.vpp; ++chunk) {
    for (size_t rank = 0; rank < ranks.size(); ++rank) {
      const bool first_slot = rank == 0 && chunk == 0;
      const bool last_slot = rank + 1 == ranks.size() && chunk + 1 == p.vpp;
      const int64_t slots =
          (rank == 0 ? embedding_slot : 0) + (rank + 1 == ranks.size() ? loss_slot : 0);
      LayoutStage s;
      s.decoder_layers = (ranks[rank] + slots) / p.vpp;
      if (first_slot) s.decoder_layers -= embedding_slot;
      if (last_slot) s.decoder_layers -= loss_slot;
      s.embedding = first_slot;
      s.loss = last_slot;
      s.mtp_layers = last_slot ? model.mtp_num_layers : 0;
      stages.push_back(s);
    }
  }
  return stages;
}

// Megatron's validate_layer_layout (and arguments.py: the layout excludes the
// other split flags), plus the placement rules of the schedule.
void explicit_layout_issues(const ModelSpec& model, const ParallelSpec& p, Issues& issues) {
  const char* path = "/training/pipeline_layout";
  auto fail = [&](const std::string& message) { issues.push_back({path, message}); };
  if (p.num_layers_in_first_stage || p.num_layers_in_last_stage ||
      p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split) {
    fail("cannot be combined with num_layers_in_first/last_stage or "
         "account_for_embedding/loss_in_pipeline_split");
    return;
  }
  const auto& stages = p.layout;
  const auto count = static_cast<int64_t>(stages.size());
  if (count != p.pp * p.vpp) {
    fail("has " + str(count) + " stages, expected pp * vpp = " + str(p.pp) + " * " + str(p.vpp) +
         (count % p.pp == 0 ? " (set vpp to " + str(count / p.pp) + ")" : ""));
    return;
  }
  int64_t embeddings = 0, losses = 0, decoders = 0, mtp = 0, mtp_stages = 0;
  int64_t mtp_stage = -1;
  for (int64_t k = 0; k < count; ++k) {
    const LayoutStage& s = stages[static_cast<size_t>(k)];
    embeddings += s.embedding ? 1 : 0;
    losses += s.loss ? 1 : 0;
    decoders += s.decoder_layers;
    if (s.mtp_layers > 0) {
      mtp += s.mtp_layers;
      ++mtp_stages;
      mtp_stage = k;
    } else if (mtp > 0 && s.decoder_layers > 0) {
      fail("decoder layers must be placed before MTP layers (stage " + str(k) + ")");
      return;
    }
  }
  auto first_item_is_embedding = [&] {
    for (const LayoutStage& s : stages) {
      if (s.embedding) return true;
      if (s.decoder_layers > 0 || s.mtp_layers > 0 || s.loss) return false;
    }
    return false;
  };
  auto last_item_is_loss = [&] {
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      if (it->loss) return true;
      if (it->decoder_layers > 0 || it->mtp_layers > 0 || it->embedding) return false;
    }
    return false;
  };
  if (embeddings != 1 || !first_item_is_embedding()) {
    fail("needs exactly one embedding 'E', as the first item");
  } else if (losses != 1 || !last_item_is_loss()) {
    fail("needs exactly one loss 'L', as the last item");
  } else if (decoders != model.num_layers) {
    fail("has " + str(decoders) + " decoder layers 't', expected num_layers (" +
         str(model.num_layers) + ")");
  } else if (mtp != model.mtp_num_layers) {
    fail("has " + str(mtp) + " MTP layers 'm', expected mtp_num_layers (" +
         str(model.mtp_num_layers) + ")");
  } else if (mtp_stages > 1) {
    fail("all MTP layers must be in one stage");
  } else if (mtp_stages == 1 && megatron_placement(p.schedule) && mtp_stage / p.pp != p.vpp - 1) {
    fail("MTP layers must be in the last virtual stage of their pp rank (Megatron-LM), got stage " +
         str(mtp_stage) + " (chunk " + str(mtp_stage / p.pp) + " of rank " + str(mtp_stage % p.pp) +
         ")");
  }
}

}  // namespace

int64_t chunks_per_rank(const ParallelSpec& p) {
  return p.schedule == PipelineSchedule::kDualPipe ? 2 : p.vpp;
}

std::vector<std::vector<int32_t>> chunk_virtual_stages(const ParallelSpec& p) {
  const auto pp = static_cast<int32_t>(p.pp);
  const auto chunks = static_cast<int32_t>(chunks_per_rank(p));
  std::vector<std::vector<int32_t>> placement(static_cast<size_t>(pp));
  for (int32_t r = 0; r < pp; ++r) {
    for (int32_t c = 0; c < chunks; ++c) {
      int32_t stage = c * pp + r;
      if (p.schedule == PipelineSchedule::kZeroBubbleV || p.schedule == PipelineSchedule::kDualPipeV) {
        stage = c == 0 ? r : 2 * pp - 1 - r;  // zbv.py / dualpipev.py: a V over 2pp stages
      } else if (p.schedule == PipelineSchedule::kDualPipe) {
        stage = c == 0 ? r : pp - 1 - r;  // dualpipe.py: the reverse direction's stage
      }
      placement[static_cast<size_t>(r)].push_back(stage);
    }
  }
  return placement;
}

Issues pipeline_layout_issues(const ModelSpec& model, const ParallelSpec& p) {
  Issues issues;
  if (!p.layout.empty()) {
    explicit_layout_issues(model, p, issues);
    return issues;
  }
  // An uneven split gives the layers of the first and last stage in model order:
  // well defined where every chunk of a rank is a whole stage of a pp-way split
  // (Megatron's placement; DualPipe's stage r and pp - 1 - r, dualpipe.py), not
  // where a V folds 2pp virtual stages over the ranks.
  const bool split_by_stage = megatron_placement(p.schedule) || p.schedule == PipelineSchedule::kDualPipe;
  if (!split_by_stage && p.pp > 1 &&
      (p.num_layers_in_first_stage || p.num_layers_in_last_stage ||
       p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split)) {
    issues.push_back({"/training/pipeline_schedule",
                      "uneven first/last stages (num_layers_in_first/last_stage, "
                      "account_for_embedding/loss_in_pipeline_split) follow Megatron's placement: "
                      "with this schedule give the split as pipeline_layout"});
    return issues;
  }
  layers_per_stage(model.num_layers, p, &issues);
  return issues;
}

PipelineLayout pipeline_layout(const ModelSpec& model, const ParallelSpec& p) {
  std::vector<LayoutStage> stages = p.layout;
  if (stages.empty()) {
    const std::vector<int64_t> ranks = layers_per_stage(model.num_layers, p, nullptr);
    TRAINSIM_CHECK(!ranks.empty(), "pipeline_layout called on an invalid split");
    stages = derived_stages(model, p, ranks);
  }
  TRAINSIM_CHECK(static_cast<int64_t>(stages.size()) == p.pp * p.vpp,
                 "pipeline_layout: stage count differs from pp * vpp");
  std::vector<ChunkLayers> chunks;
  chunks.reserve(stages.size());
  int64_t next_layer = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const LayoutStage& s = stages[k];
    chunks.push_back({next_layer, s.decoder_layers, s.embedding, s.mtp_layers, s.loss,
                      static_cast<int32_t>(k)});
    next_layer += s.decoder_layers;
  }
  PipelineLayout layout;
  for (const auto& row : chunk_virtual_stages(p)) {
    layout.emplace_back();
    for (const int32_t stage : row) layout.back().push_back(chunks[static_cast<size_t>(stage)]);
  }
  return layout;
}

}  // namespace trainsim
