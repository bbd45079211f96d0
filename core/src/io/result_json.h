// Estimate -> JSON (SI units, schema_version 1) and the two envelopes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "trainsim/issue.h"
#include "trainsim/result.h"

namespace trainsim::io {

nlohmann::json estimate_to_json(const Estimate& estimate);

// The full estimate envelope, timeline included.
std::string estimate_envelope(const Estimate& estimate);

// {"schema_version":1,"ok":true,"result":...}
std::string result_envelope(const nlohmann::json& result);
// {"schema_version":1,"ok":false,"errors":[{"path":...,"message":...}]}
std::string errors_envelope(const Issues& issues);

// Serializes without throwing on invalid UTF-8 (replaced by U+FFFD).
std::string dump(const nlohmann::json& value, int indent = -1);

}  // namespace trainsim::io
