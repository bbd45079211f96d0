// Estimate -> CSV (RFC 4180), one value per row so that any spreadsheet can
// pivot it: "section,stage,metric,value,unit". stage is empty for totals.
// Sections: model, memory, memory_stage, time, time_breakdown, time_stage,
// throughput, feasibility. Values are SI (bytes, s, FLOP), as in the JSON.
#pragma once

#include <string>

#include "trainsim/result.h"

namespace trainsim::report {

std::string estimate_to_csv(const Estimate& estimate);

}  // namespace trainsim::report
