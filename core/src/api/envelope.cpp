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
  for (const Issue& issue : issues) {
    errors.push_back({{"path", issue.path}, {"message", issue.message}});
  }
  return {schema::dump({{"schema_version", kSchemaVersion}, {"ok", false}, {"errors", errors}}),
          false, false};
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
