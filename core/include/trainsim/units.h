// Unit constants. The core works in SI (bytes, seconds, FLOP, FLOP/s);
// human units appear only in JSON keys and are converted by schema/ (each field
// row's scale).
#pragma once

namespace trainsim {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kMicro = 1e-6;
inline constexpr double kMilli = 1e-3;

}  // namespace trainsim
