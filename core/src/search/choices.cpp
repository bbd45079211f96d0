#include "search/choices.h"

#include <algorithm>

#include "validate.h"

namespace trainsim {

// get and set of an enum or integer member of TrainingSpec.
#define TRAINSIM_CHOICE_ACCESS(member, type)                                              \
  .get = [](const TrainingSpec& t) { return static_cast<double>(t.member); },             \
  .set = [](TrainingSpec& t, double v) { t.member = static_cast<type>(static_cast<int64_t>(v)); }

const std::vector<ChoiceDimension>& choice_dimensions() {
  static const std::vector<ChoiceDimension> dimensions = {
      {.key = "cp_comm_type",
       TRAINSIM_CHOICE_ACCESS(parallel.cp_comm_type, CpCommType),
       .matters = [](int64_t, int64_t cp, int64_t, int64_t) { return cp > 1; },
       .in_layout = false},
      // Every schedule but 1f1b needs pipeline parallelism (time/schedule_orders.cpp,
      // schedule_supported); each is its own layout (its bubble, memory and overlap differ).
      {.key = "pipeline_schedule",
       TRAINSIM_CHOICE_ACCESS(parallel.schedule, PipelineSchedule),
       .matters = [](int64_t, int64_t, int64_t pp, int64_t) { return pp > 1; },
       .in_layout = true},
      // The FP8 scaling recipe (Megatron --fp8-recipe): it changes every plan.
      {.key = "fp8_recipe",
       TRAINSIM_CHOICE_ACCESS(fp8_recipe, Fp8Recipe),
       .matters = [](int64_t, int64_t, int64_t, int64_t) { return true; },
       .in_layout = false,
       .applies = [](const TrainingSpec& t) { return t.dtype == Dtype::kFp8; },
       .applies_to = "dtype \"fp8\" (set /dtype or remove the constraint)",
       .value_rules = fp8_recipe_gpu_issues},
      // Optimizer CPU offload (Megatron --optimizer-offload-fraction): the part of the
      // optimizer states in host memory, on any layout.
      {.key = "optimizer_offload_fraction",
       .get = [](const TrainingSpec& t) { return t.optimizer_offload_fraction; },
       .set = [](TrainingSpec& t, double v) { t.optimizer_offload_fraction = v; },
       .matters = [](int64_t, int64_t, int64_t, int64_t) { return true; },
       .in_layout = false,
       .value_rules = optimizer_offload_issues},
      // Activation CPU offload (Megatron --cpu-offloading-num-layers): Megatron-LM has
      // none with pipeline parallelism (validate.cpp), so pp > 1 tries no offload.
      {.key = "activation_offload_layers",
       TRAINSIM_CHOICE_ACCESS(activation_offload_layers, int64_t),
       .matters = [](int64_t, int64_t, int64_t pp, int64_t) { return pp == 1; },
       .in_layout = false,
       .value_rules = activation_offload_issues},
      // Tensor-parallel communication overlap (Megatron --tp-comm-overlap, TE userbuffers,
      // time/tp_overlap.h): only tensor-parallel plans have the collectives it hides; it
      // needs sequence parallelism (validate.cpp), which the search's own constraint sets.
      {.key = "tp_comm_overlap",
       .get = [](const TrainingSpec& t) { return t.overlap.tp_comm ? 1.0 : 0.0; },
       .set = [](TrainingSpec& t, double v) { t.overlap.tp_comm = v != 0.0; },
       .matters = [](int64_t tp, int64_t, int64_t, int64_t) { return tp > 1; },
       .in_layout = false},
      // Expert-parallel all-to-all overlap (Megatron --overlap-moe-expert-parallel-comm,
      // time/ep_overlap.h): only plans with expert parallelism have the all-to-alls; the
      // rules on recompute and vpp stay with validate() per candidate.
      {.key = "overlap_moe_expert_parallel_comm",
       .get = [](const TrainingSpec& t) { return t.overlap.moe_ep_comm ? 1.0 : 0.0; },
       .set = [](TrainingSpec& t, double v) { t.overlap.moe_ep_comm = v != 0.0; },
       .matters = [](int64_t, int64_t, int64_t, int64_t ep) { return ep > 1; },
       .in_layout = false,
       .value_rules = ep_overlap_value_issues},
  };
  static_assert(kMaxChoiceDimensions >= 7);
  return dimensions;
}

#undef TRAINSIM_CHOICE_ACCESS

int8_t fixed_choice(const ChoiceDimension& dimension, const std::vector<double>& values) {
  const auto found = std::find(values.begin(), values.end(), dimension.get(TrainingSpec{}));
  return found == values.end() ? kDefaultChoice : static_cast<int8_t>(found - values.begin());
}

double choice_value(const SearchSpec& spec, size_t d, int8_t index) {
  if (index == kDefaultChoice) return choice_dimensions()[d].get(TrainingSpec{});
  return spec.choices[d][static_cast<size_t>(index)];
}

void apply_choices(const SearchSpec& spec, const std::array<int8_t, kMaxChoiceDimensions>& choice,
                   TrainingSpec& training) {
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) dimensions[d].set(training, choice_value(spec, d, choice[d]));
}

}  // namespace trainsim
