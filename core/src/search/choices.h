// Training enums a search tries several values of: each is one row of
// choice_dimensions() (choices.cpp). The constraint of the same name lists
// the values to try (schema/search_constraints.cpp reads it with the training
// key's own enum names); without it the training template's value is the only
// one. A row says when its key matters for a plan (cp_comm_type only with
// cp > 1): elsewhere only the first value is tried, so no plan is a duplicate.
// Adding a key (a pipeline schedule, an FP8 recipe, ...) is one row here.
#pragma once

#include <cstdint>
#include <vector>

#include "search/search_spec.h"
#include "trainsim/spec.h"

namespace trainsim {

struct ChoiceDimension {
  const char* key;  ///< the training key and the constraint key
  int (*get)(const TrainingSpec&);
  void (*set)(TrainingSpec&, int);
  /// Whether the key changes a plan with these degrees.
  bool (*matters)(int64_t tp, int64_t cp, int64_t pp);
  bool in_layout;  ///< part of a layout for diversity "per_layout" (a pipeline schedule is)
};

// At most kMaxChoiceDimensions rows.
const std::vector<ChoiceDimension>& choice_dimensions();

}  // namespace trainsim
