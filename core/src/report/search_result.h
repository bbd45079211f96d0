// Search outcome -> its result object: every plan as a config document
// estimate_json accepts, its key metrics, the full result of the top K, the
// Pareto front and the counts (SI units, like estimate results).
#pragma once

#include <nlohmann/json.hpp>

#include "schema/search_request.h"
#include "search/hints.h"
#include "search/search.h"

namespace trainsim::report {

nlohmann::json search_result_json(const schema::SearchRequest& request, const SearchOutcome& outcome);

// The config document (accepted by estimate_json) of one candidate.
nlohmann::json candidate_config_json(const schema::SearchRequest& request, const Candidate& candidate);

nlohmann::json search_counts_json(const SearchCounts& counts);
nlohmann::json search_hints_json(const std::vector<SearchHint>& hints);

}  // namespace trainsim::report
