// The members of a layout class (space.h), one at a time: a combination is a
// candidate only when the config parser and validate() would accept it as a
// config (the same validate() call: the rules cannot drift); the others are
// counted by their first issue.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/candidate.h"
#include "search/search_spec.h"
#include "search/space.h"
#include "trainsim/issue.h"
#include "validate.h"

namespace trainsim {

Candidate make_candidate(const LayoutClass& layout, const SubBlock& block, const StagePlan& plan);

// Checks combinations with the config parser's rules, in its order (validate.h):
// tokens per micro-batch, the size derivation (whole micro-batches, passes to
// simulate), then the cross-field rules.
class CandidateChecker {
 public:
  explicit CandidateChecker(const SearchSpec& spec);
  // nullptr when valid (c.num_micro_batches is then set); else the reason, as
  // issue_reason() gives it (valid until the checker is destroyed).
  const std::string* check(Candidate& c);

 private:
  const SearchSpec& spec_;
  Config config_;
  SizeRequest sizes_;
  static constexpr size_t kMaxCachedReasons = 4096;
  std::unordered_map<std::string, std::string> reasons_;  ///< "path\nmessage" -> reason
  std::string uncached_;
};

// Every combination of a search in order, valid ones kept with their index
// (tests and benchmarks only: the search itself never lists candidates).
struct Enumeration {
  std::vector<Candidate> candidates;  ///< valid, in enumeration order
  std::vector<int64_t> indices;       ///< each candidate's combination index
  int64_t considered = 0;             ///< combinations of the allowed values
  std::map<std::string, int64_t> invalid_by_reason;
  int64_t invalid() const { return considered - static_cast<int64_t>(candidates.size()); }
};
Enumeration enumerate_candidates(const SearchSpec& spec);

// "/training/tp: must divide num_attention_heads": the issue without the values
// that differ between candidates (", got N" and "(N)"), to count issues by kind.
std::string issue_reason(const Issue& issue);

}  // namespace trainsim
