// Names that are nearly right: the edit distance behind the did-you-mean hints
// of config keys, preset ids, Megatron-LM flags and Hugging Face config keys.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::schema {

// Optimal string alignment distance (Damerau-Levenshtein in which no substring
// is edited twice; Damerau 1964, Commun. ACM 7(3)): inserting, deleting or
// substituting one character, or swapping two adjacent ones, each cost 1.
size_t edit_distance(std::string_view a, std::string_view b);

// The known name a mistyped `word` most likely meant, or "" when none is close.
// Case, leading dashes and '-' versus '_' are not counted ("--micro_batch_size"
// means "--micro-batch-size"); otherwise the nearest name within 1 edit for a
// word of at most 5 characters, 2 up to 12 and 3 beyond (ties: the first
// candidate). Words longer than 80 characters get no hint.
std::string likely_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trainsim::schema
