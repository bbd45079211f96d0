// SimuMax system file (accelerator ops with measured efficiency tables, HBM
// kernel classes, network tiers) -> trainsim "system" object.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "trainsim/issue.h"

namespace trainsim::interop {

// Wrong-typed members are issues at "/simumax_system/..."; figures the file
// does not measure (efficient_factor 0) are left out with a note.
nlohmann::json convert_simumax_system(const nlohmann::json& system, Issues& issues,
                                      std::vector<std::string>& notes);

}  // namespace trainsim::interop
