// The "whatif" object of a what-if document (a config document with an
// optional top-level "whatif": {"factors": [...], "figures": [...]}).
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "schema/field.h"
#include "trainsim/issue.h"
#include "whatif/sensitivity.h"

namespace trainsim::schema {

struct WhatIfRequest {
  std::vector<double> factors{kDefaultWhatIfFactors.begin(), kDefaultWhatIfFactors.end()};
  std::vector<SystemFigure> figures{kAllSystemFigures.begin(), kAllSystemFigures.end()};
};

// Reads value (the document's "whatif", at path "/whatif") into request.
void read_whatif(const nlohmann::json& value, WhatIfRequest& request, Issues& issues);

// The published keys of the "whatif" object (search_fields.cpp).
std::vector<FieldInfo> whatif_fields();

}  // namespace trainsim::schema
