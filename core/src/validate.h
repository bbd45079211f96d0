// Cross-field validation of a Config whose fields were each read correctly.
#pragma once

#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim {

Issues validate(const Config& config);

}  // namespace trainsim
