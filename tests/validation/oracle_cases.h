// The SimuMax oracle cases, imported with `trainsim import simumax` and
// estimated once per test run (shared by the memory and time validations).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::testing {

struct OracleCase {
  int64_t id = 0;
  nlohmann::json expected;  ///< the transcribed case: simumax inputs, memory, time
  nlohmann::json config;    ///< the imported trainsim config
  nlohmann::json result;    ///< the estimate (empty object when it failed)
  std::string error;        ///< why import or estimate failed
};

const std::vector<OracleCase>& oracle_cases();

// Our stage for SimuMax's stage key (first_stage, middle_stage, last_stage, pp_stage_<k>).
const nlohmann::json& oracle_stage(const OracleCase& c, const std::string& simumax_stage);

}  // namespace trainsim::testing
