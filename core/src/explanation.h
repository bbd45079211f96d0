// Building Estimate::explanations (trainsim/result.h): a number of the result,
// the formula it is computed by, the values it was computed from and a source.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "trainsim/result.h"

namespace trainsim {

inline ExplanationTerm term(std::string symbol, double value, std::string unit, std::string meaning) {
  return {std::move(symbol), value, std::move(unit), std::move(meaning)};
}

inline std::string stage_pointer(int64_t stage, const char* key) {
  return "/memory/stages/" + std::to_string(stage) + "/" + key;
}

}  // namespace trainsim
