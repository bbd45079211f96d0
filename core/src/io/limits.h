// Upper bounds accepted for integer inputs. They keep every derived product
// (bytes, FLOPs) far inside double precision and int64 range; a value above
// them is reported as an input issue instead of overflowing.
#pragma once

#include <cstdint>

namespace trainsim::io {

inline constexpr int64_t kMaxLayers = 100'000;
inline constexpr int64_t kMaxWidth = int64_t{1} << 24;    // hidden / ffn / head dims
inline constexpr int64_t kMaxHeads = 1 << 16;
inline constexpr int64_t kMaxExperts = 1 << 16;
inline constexpr int64_t kMaxVocab = int64_t{1} << 26;
inline constexpr int64_t kMaxSeqLen = int64_t{1} << 26;   // 64 Mi tokens
inline constexpr int64_t kMaxGpus = int64_t{1} << 24;
inline constexpr int64_t kMaxBatch = int64_t{1} << 30;    // sequences or micro-batches

}  // namespace trainsim::io
