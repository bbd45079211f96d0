// Shared helpers for the test suite.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "trainsim/trainsim.h"

namespace trainsim::testing {

inline std::string read_text_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

inline std::string test_data_path(const std::string& relative) {
  return std::string(TRAINSIM_TEST_DATA_DIR) + "/" + relative;
}

// A small valid config every table-driven test patches.
inline nlohmann::json base_config() {
  return nlohmann::json::parse(R"({
    "model": "llama3-8b",
    "training": {"seq_len": 4096, "micro_batch_size": 1, "global_batch_size": 64,
                 "tp": 2, "pp": 2, "sequence_parallel": true, "zero_stage": 1},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 16}
  })");
}

inline nlohmann::json run_estimate(const nlohmann::json& config) {
  return nlohmann::json::parse(estimate_json(config.dump()));
}

// Estimates a config that must be valid; the test fails with the errors otherwise.
inline nlohmann::json estimate_ok(const nlohmann::json& config) {
  nlohmann::json envelope = run_estimate(config);
  if (!envelope.value("ok", false)) {
    throw std::runtime_error("estimate failed: " + envelope.dump());
  }
  return envelope["result"];
}

}  // namespace trainsim::testing
