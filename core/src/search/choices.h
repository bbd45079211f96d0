// Training keys a search tries several values of: each is one row of
// choice_dimensions() (choices.cpp). The constraint of the same name lists
// the values to try (schema/search_constraints.cpp reads them as the training
// key reads one: an enum's names, a number in the key's range); without it the
// training template's value is the only one. A row says
//  - when its key matters for a plan (cp_comm_type only with cp > 1, activation
//    offload only with pp 1, TP overlap with tp > 1, EP overlap with ep > 1):
//    elsewhere one value is tried (fixed_choice), so no plan is a duplicate;
//  - when the constraint applies at all (fp8_recipe only with dtype fp8);
//  - which of validate()'s rules a value must pass on the search's model and
//    system (validate.h): a value that breaks them for every plan is refused at
//    its constraint's path, in validate()'s words.
// Rules between a value and what varies per plan (recompute, the degrees) stay
// with validate() on each candidate. Adding a key is one row here.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "search/search_spec.h"
#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim {

struct ChoiceDimension {
  const char* key;  ///< the training key and the constraint key
  double (*get)(const TrainingSpec&);
  void (*set)(TrainingSpec&, double);
  /// Whether the key changes a plan with these degrees (and may vary there).
  bool (*matters)(int64_t tp, int64_t cp, int64_t pp, int64_t ep);
  bool in_layout;  ///< part of a layout for diversity "per_layout" (a pipeline schedule is)
  /// Whether the constraint applies to the search's training template (null: always);
  /// `applies_to` completes "applies only to ..." when it does not.
  bool (*applies)(const TrainingSpec&) = nullptr;
  const char* applies_to = "";
  /// validate()'s rules of the key (validate.h), run on the search's template (every
  /// degree 1, no recompute) holding one value; null: none.
  Issues (*value_rules)(const Config&) = nullptr;
};

// At most kMaxChoiceDimensions rows.
const std::vector<ChoiceDimension>& choice_dimensions();

// The index of a plan that takes the key's default whether listed or not.
inline constexpr int8_t kDefaultChoice = -1;

// The one value tried where the key does not matter: the key's default (no
// offload, the 1F1B schedule), as its index into `values` when listed, else
// kDefaultChoice. A value the key cannot take there (a zero-bubble schedule at
// pp 1, offload with pp > 1) is never applied to such a plan.
int8_t fixed_choice(const ChoiceDimension& dimension, const std::vector<double>& values);

// The value of dimension `d` that a plan's choice index selects.
double choice_value(const SearchSpec& spec, size_t d, int8_t index);

// Writes the values that a plan's choice indices select into `training`.
void apply_choices(const SearchSpec& spec, const std::array<int8_t, kMaxChoiceDimensions>& choice,
                   TrainingSpec& training);

}  // namespace trainsim
