// Estimates a generated config (random_configs.h) that must be valid: the test
// fails with the config's errors otherwise. Shared by the property suites.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "trainsim/trainsim.h"

namespace trainsim::testing {

inline Estimate estimate_generated(const nlohmann::json& document) {
  Config config;
  Issues issues;
  if (!parse_config(document.dump(), config, issues)) {
    std::string text;
    for (const Issue& issue : issues) text += issue.path + ": " + issue.message + "\n";
    ADD_FAILURE() << "generated config is invalid:\n" << text << document.dump();
    return {};
  }
  return estimate(config);
}

}  // namespace trainsim::testing
