// What-if document -> sensitivity table: a config document (as estimate_json
// takes) with an optional top-level "whatif": {"factors": [...], "figures": [...]}.
#pragma once

#include <string>
#include <string_view>

namespace trainsim::io {

std::string whatif_envelope(std::string_view text);

}  // namespace trainsim::io
