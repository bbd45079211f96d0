// When a search finds no plan that fits: which rule blocked the candidates
// and which constraint of the search document would lift it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search/search.h"
#include "search/search_spec.h"

namespace trainsim {

struct SearchHint {
  std::string rule;        ///< the blocking rule (an invalid reason, or the memory budget)
  int64_t count = 0;       ///< combinations it blocked
  std::string constraint;  ///< JSON pointer of the search document's key to change
  std::string suggestion;
};

// Empty when some plan fits. closest_peak_bytes: the least estimated peak (if any).
std::vector<SearchHint> search_hints(const SearchSpec& spec, const SearchCounts& counts,
                                     double memory_budget_bytes,
                                     std::optional<double> closest_peak_bytes);

}  // namespace trainsim
