// Every candidate of a search, in a fixed order: GPU count, tp, cp, pp (dp
// follows), ep, etp, sequence parallelism, micro-batch size, stage split, vpp,
// recompute mode, ZeRO stage. A combination is kept only when the config
// parser and validate() would accept it as a config (the same validate() call:
// the rules cannot drift); the others are counted by their first issue.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "search/candidate.h"
#include "search/search_spec.h"
#include "trainsim/issue.h"

namespace trainsim {

struct Enumeration {
  std::vector<Candidate> candidates;  ///< valid, in enumeration order
  int64_t considered = 0;             ///< combinations of the allowed values
  std::map<std::string, int64_t> invalid_by_reason;
  int64_t invalid() const { return considered - static_cast<int64_t>(candidates.size()); }
};

Enumeration enumerate_candidates(const SearchSpec& spec);

// "/training/tp: must divide num_attention_heads": the issue without the values
// that differ between candidates (", got N" and "(N)"), to count issues by kind.
std::string issue_reason(const Issue& issue);

// Stage splits tried for pp stages of num_layers layers: {0, 0} (even), then,
// when uneven, every (first, last) layer count that leaves the same number of
// layers on each middle stage with first and last each at most that number
// (pp = 2: at most half the layers, rounded up), except the even split itself.
std::vector<std::pair<int64_t, int64_t>> stage_splits(int64_t num_layers, int64_t pp, bool uneven);

}  // namespace trainsim
