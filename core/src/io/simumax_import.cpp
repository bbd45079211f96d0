#include "io/simumax_import.h"

namespace trainsim::io {

nlohmann::json import_simumax(std::string_view, std::string_view, std::string_view,
                              Issues& issues) {
  issues.push_back({"", "simumax import is not available in this build yet"});
  return nullptr;
}

}  // namespace trainsim::io
