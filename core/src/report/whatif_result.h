// What-if sensitivity -> its result object (README "Search and what-if").
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "whatif/sensitivity.h"

namespace trainsim::report {

nlohmann::json whatif_to_json(const Sensitivity& sensitivity, const std::vector<double>& factors);

}  // namespace trainsim::report
