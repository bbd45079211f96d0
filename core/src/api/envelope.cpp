#include "api/envelope.h"

#include "report/result_json.h"
#include "schema/json_reader.h"

namespace trainsim::api {

ApiResult ok_envelope(const nlohmann::json& result) {
  report::check_finite(result);
  return {schema::dump({{"schema_version", kSchemaVersion}, {"ok", true}, {"result", result}}), true,
          false};
}

ApiResult ok_envelope_text(std::string result_text) {
  return {"{\"schema_version\":" + std::to_string(kSchemaVersion) + ",\"ok\":true,\"result\":" +
              result_text + "}",
          true, false};
}

ApiResult error_envelope(const Issues& issues) {
  nlohmann::json errors = nlohmann::json::array();
  for (size_t i = 0; i < issues.size() && i < kMaxReportedIssues; ++i) {
    errors.push_back({{"path", schema::shorten_pointer(issues[i].path)},
                      {"message", schema::excerpt(issues[i].message, kMaxMessageChars)}});
  }
  if (issues.size() > kMaxReportedIssues) {
    errors.push_back({{"path", ""},
                      {"message", "and " + std::to_string(issues.size() - kMaxReportedIssues) +
                                      " more errors (the first " +
                                      std::to_string(kMaxReportedIssues) + " are listed)"}});
  }
  return {schema::dump({{"schema_version", kSchemaVersion}, {"ok", false}, {"errors", errors}}),
          false, false};
}

nlohmann::json capped_notes(const std::vector<std::string>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < notes.size() && i < kMaxReportedNotes; ++i) {
    out.push_back(schema::excerpt(notes[i], kMaxMessageChars));
  }
  if (notes.size() > kMaxReportedNotes) {
    out.push_back("and " + std::to_string(notes.size() - kMaxReportedNotes) + " more notes");
  }
  return out;
}

ApiResult internal_error_envelope(std::string_view what) {
  const nlohmann::json envelope = {
      {"schema_version", kSchemaVersion},
      {"ok", false},
      {"internal", true},
      {"errors",
       {{{"path", ""}, {"message", "internal error (please report): " + std::string(what)}}}}};
  return {schema::dump(envelope), false, true};
}

}  // namespace trainsim::api
