// Estimate -> the result object of an estimate (SI units, schema_version 1).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "trainsim/result.h"

namespace trainsim::report {

// Without the timeline (search results hold many of these).
nlohmann::json estimate_to_json(const Estimate& estimate);

// The whole result object as text, timeline included (written directly: it
// can hold tens of thousands of events).
std::string estimate_result_text(const Estimate& estimate);

// Throws InternalError naming the first NaN or infinity in a result: inputs are
// finite and bounded, so one is a bug, and it must not leak as null or "nan".
void check_finite(const nlohmann::json& result);

}  // namespace trainsim::report
