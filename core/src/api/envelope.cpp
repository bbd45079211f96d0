#include "api/envelope.h"

#include "io/result_json.h"

namespace trainsim::api {

ApiResult ok_envelope(const nlohmann::json& result) {
  return {io::result_envelope(result), true, false};
}

ApiResult ok_envelope_text(std::string text) { return {std::move(text), true, false}; }

ApiResult error_envelope(const Issues& issues) {
  return {io::errors_envelope(issues), false, false};
}

ApiResult internal_error_envelope(std::string_view what) {
  const nlohmann::json envelope = {
      {"schema_version", kSchemaVersion},
      {"ok", false},
      {"internal", true},
      {"errors",
       {{{"path", ""}, {"message", "internal error (please report): " + std::string(what)}}}}};
  return {io::dump(envelope), false, true};
}

}  // namespace trainsim::api
