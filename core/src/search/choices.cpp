#include "search/choices.h"

namespace trainsim {

// One row per key: TRAINSIM_CHOICE(key, member of TrainingSpec, enum type,
// when it matters, part of the layout).
#define TRAINSIM_CHOICE(key, member, type, matters_expr, in_layout)                         \
  ChoiceDimension {                                                                         \
    key, [](const TrainingSpec& t) { return static_cast<int>(t.member); },                  \
        [](TrainingSpec& t, int v) { t.member = static_cast<type>(v); },                    \
        [](int64_t tp, int64_t cp, int64_t pp) {                                            \
          (void)tp, (void)cp, (void)pp;                                                     \
          return static_cast<bool>(matters_expr);                                           \
        },                                                                                  \
        in_layout                                                                           \
  }

const std::vector<ChoiceDimension>& choice_dimensions() {
  static const std::vector<ChoiceDimension> dimensions = {
      TRAINSIM_CHOICE("cp_comm_type", parallel.cp_comm_type, CpCommType, cp > 1, false),
      // Every schedule but 1f1b needs pipeline parallelism (time/schedule_orders.cpp,
      // schedule_supported); each is its own layout (its bubble, memory and overlap differ).
      TRAINSIM_CHOICE("pipeline_schedule", parallel.schedule, PipelineSchedule, pp > 1, true),
      // The FP8 scaling recipe (Megatron --fp8-recipe): only with dtype fp8, which the
      // search request checks (schema/search_constraints.cpp); it changes every plan.
      TRAINSIM_CHOICE("fp8_recipe", fp8_recipe, Fp8Recipe, true, false),
  };
  static_assert(kMaxChoiceDimensions >= 3);
  return dimensions;
}

#undef TRAINSIM_CHOICE

}  // namespace trainsim
