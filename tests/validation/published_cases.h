// The measured runs of tests/validation/data/published_runs*.json, and their
// comparison with trainsim: each case is compared in the quantity its source
// measured (step time, tokens/s/GPU, per-layer time, or model TFLOP/s/GPU under
// the source's own FLOP convention).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace trainsim::validation {

struct PublishedCase {
  std::string id;
  std::string source;
  std::string gpu;   ///< system preset id
  std::string role;  ///< fit | held_out (the per-GPU split of published_runs_test)
  std::string file;  ///< the data file it came from
  nlohmann::json measured;
  nlohmann::json config;
  /// Why the case is missed by more than published_runs_test's per-case bound, when its data
  /// file says so ("known_deviation"); empty for every other case.
  std::string known_deviation;
};

struct Outcome {
  double predicted = 0.0;  ///< in the source's quantity
  double measured = 0.0;
  std::string error;       ///< why the estimate failed (empty when it ran)
  double relative_error() const { return predicted / measured - 1.0; }
  /// The predicted step time over the measured one (time-like, whatever the quantity).
  double step_ratio() const;
  bool time_like = true;   ///< the quantity grows with the step time
};

// Every case of every published_runs*.json (file order, then case order).
const std::vector<PublishedCase>& published_cases();
// The skipped rows of every file, with their reasons.
std::vector<nlohmann::json> skipped_rows();

// The GPU generation of a system preset: ampere, hopper, blackwell, blackwell_ultra.
std::string generation_of(const std::string& gpu);

// Estimates the case with `system_patch` merged into its system (JSON merge patch).
Outcome evaluate(const PublishedCase& c, const nlohmann::json& system_patch = nlohmann::json::object());

double median(std::vector<double> values);

// gtest prints a case by its id.
inline void PrintTo(const PublishedCase& c, std::ostream* os) { *os << c.id; }

}  // namespace trainsim::validation
