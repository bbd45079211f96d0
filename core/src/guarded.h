// The catch-all of every string-in, string-out entry point (api.cpp,
// api_interop.cpp): any exception escaping the core is a bug and becomes an
// internal-error envelope instead of crossing the C++/WASM boundary.
#pragma once

#include <exception>
#include <string>

#include "trainsim/trainsim.h"

namespace trainsim::detail {

template <typename Fn>
std::string guarded(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& error) {
    return internal_error_json(error.what());
  } catch (...) {
    return internal_error_json("unknown exception");
  }
}

}  // namespace trainsim::detail
