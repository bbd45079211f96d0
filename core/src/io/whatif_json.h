// What-if document -> sensitivity table: a config document (as estimate_json
// takes) with an optional top-level "whatif": {"factors": [...], "figures": [...]}.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "trainsim/issue.h"

namespace trainsim::io {

// The what-if result, or null with issues (config issues first).
nlohmann::json whatif_result(std::string_view text, Issues& issues);

}  // namespace trainsim::io
