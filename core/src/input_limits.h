// Upper bounds accepted for integer inputs. They keep every derived product
// (bytes, FLOPs) far inside double precision and int64 range; a value above
// them is reported as an input issue instead of overflowing.
#pragma once

#include <cstdint>

namespace trainsim {

inline constexpr int64_t kMaxLayers = 100'000;
inline constexpr int64_t kMaxMtpLayers = 64;  // multi-token prediction depth
inline constexpr int64_t kMaxWidth = int64_t{1} << 24;    // hidden / ffn / head dims
inline constexpr int64_t kMaxHeads = 1 << 16;
inline constexpr int64_t kMaxExperts = 1 << 16;
inline constexpr int64_t kMaxSms = 1 << 20;  // streaming multiprocessors of one GPU
inline constexpr int64_t kMaxVocab = int64_t{1} << 26;
inline constexpr int64_t kMaxSeqLen = int64_t{1} << 26;   // 64 Mi tokens
inline constexpr int64_t kMaxGpus = int64_t{1} << 24;
inline constexpr int64_t kMaxBatch = int64_t{1} << 30;    // sequences or micro-batches
inline constexpr int64_t kMaxFsdpUnitElements = int64_t{1} << 50;  // --suggested-communication-unit-size
// seq_len * micro_batch_size: token counts times top_k, widths or the vocabulary
// stay inside int64 (2^32 * 2^26 = 2^58).
inline constexpr int64_t kMaxTokensPerMicroBatch = int64_t{1} << 32;
// Expert capacity = tokens * top_k * factor / experts, counted in int64.
inline constexpr double kMaxCapacityFactor = 1000.0;
// Smallest rate, capacity or efficiency a system may state (GB/s, TFLOP/s, GiB or
// a fraction): with it the slowest possible step (about 1e44 s) stays finite, and
// so do the throughput figures derived from it.
inline constexpr double kMinRate = 1e-6;
// The pipeline schedule is simulated one micro-batch pass at a time
// (time/pipeline_schedule.h): pp * vpp * num_micro_batches passes take about
// 0.3 us and 40 bytes each, so this bounds an estimate to about a second.
inline constexpr int64_t kMaxPipelinePasses = int64_t{1} << 22;

}  // namespace trainsim
