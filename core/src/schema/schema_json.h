// The published schema (the "schema" op): keys, types, enums, defaults,
// bounds, units and help of config, search and what-if documents, built from
// the same tables the readers use, so the page never copies them.
#pragma once

#include <nlohmann/json.hpp>

namespace trainsim::schema {

const nlohmann::json& schema_document();

}  // namespace trainsim::schema
