// The envelopes every operation returns, with their status (ApiResult), so
// that callers never read the status back out of the text.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "trainsim/issue.h"
#include "trainsim/trainsim.h"

namespace trainsim::api {

// Error and note lists are cut after this many entries, with one more entry
// saying how many were left out; each message after kMaxMessageChars.
inline constexpr size_t kMaxReportedIssues = 100;
inline constexpr size_t kMaxReportedNotes = 100;
inline constexpr size_t kMaxMessageChars = 2000;

// The first kMaxReportedNotes notes, then "and K more notes".
nlohmann::json capped_notes(const std::vector<std::string>& notes);

// {"ok":true,"result":...,"schema_version":1}
ApiResult ok_envelope(const nlohmann::json& result);
// The same around a result object the caller wrote as text (the estimate,
// with its timeline).
ApiResult ok_envelope_text(std::string result_text);
// {"errors":[{"message":...,"path":...}],"ok":false,"schema_version":1}
ApiResult error_envelope(const Issues& issues);
// {"errors":[...],"internal":true,"ok":false,"schema_version":1}
ApiResult internal_error_envelope(std::string_view what);

}  // namespace trainsim::api
