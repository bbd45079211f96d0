// SimuMax (MooreThreads/SimuMax v1.2) model / strategy / system config files
// -> one trainsim config document, so SimuMax users can migrate.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "trainsim/issue.h"

namespace trainsim::interop {

// Paths in issues are prefixed "/simumax_model", "/simumax_strategy" and
// "/simumax_system".
nlohmann::json import_simumax(std::string_view model_text, std::string_view strategy_text,
                              std::string_view system_text, Issues& issues);

}  // namespace trainsim::interop
