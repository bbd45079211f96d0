// Input problems are data, not exceptions: every parser and validator collects
// them so a user sees all of them at once, each with a JSON-pointer path.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim {

struct Issue {
  std::string path;     ///< JSON pointer into the submitted document, e.g. "/training/tp"
  std::string message;  ///< lowercase, no final period: what is wrong and what was expected
};

using Issues = std::vector<Issue>;

// A bug in trainsim, never a bad input. The API boundary turns it into an
// envelope with "internal": true.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

#define TRAINSIM_CHECK(cond, msg)                                  \
  do {                                                             \
    if (!(cond)) throw ::trainsim::InternalError(std::string(msg)); \
  } while (false)

}  // namespace trainsim
