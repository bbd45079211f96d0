// Reads a config document the test expects to be valid: parse and validation
// issues are reported as test failures naming their JSON path.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schema/config_reader.h"
#include "validate.h"

namespace trainsim::testing {

inline Config valid_config_of(const nlohmann::json& document) {
  Config config;
  Issues issues;
  EXPECT_TRUE(schema::read_config(document.dump(), config, issues)) << document.dump();
  for (const Issue& issue : issues) ADD_FAILURE() << issue.path << ": " << issue.message;
  for (const Issue& issue : validate(config)) ADD_FAILURE() << issue.path << ": " << issue.message;
  return config;
}

}  // namespace trainsim::testing
