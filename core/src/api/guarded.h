// The one catch-all of the API: every operation runs inside guarded(), so an
// exception escaping the core (a bug, never bad input) becomes an internal-error
// envelope instead of crossing the C++/WASM boundary.
#pragma once

#include <exception>

#include "api/envelope.h"

namespace trainsim::api {

template <typename Fn>
ApiResult guarded(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& error) {
    return internal_error_envelope(error.what());
  } catch (...) {
    return internal_error_envelope("unknown exception");
  }
}

}  // namespace trainsim::api
