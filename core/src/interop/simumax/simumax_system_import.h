// SimuMax system file (accelerator ops with measured efficiency tables, HBM
// kernel classes, network tiers) -> trainsim "system" object.
#pragma once

#include <nlohmann/json.hpp>

#include "trainsim/issue.h"

namespace trainsim::interop {

nlohmann::json convert_simumax_system(const nlohmann::json& system, Issues& issues);

}  // namespace trainsim::interop
