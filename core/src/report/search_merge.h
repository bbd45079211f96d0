// Merging a search run page by page ({"page": {"offset", "limit"}} in the
// search document) back into the result of one run.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "trainsim/issue.h"

namespace trainsim::report {

// {"pages": [result or envelope, ...]} -> the result of one run, or null with
// issues when the pages are not one search's consecutive pages.
nlohmann::json merge_search_pages(std::string_view text, Issues& issues);

}  // namespace trainsim::report
