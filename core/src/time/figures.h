// The system figures the time model prices with, named by their JSON pointer
// into the system object (system.provenance keys), so an estimate can say
// which figures it used and where each comes from (result.calibration).
#pragma once

#include <bitset>
#include <cstdint>
#include <string>

#include "trainsim/spec.h"

namespace trainsim {

enum class Figure : uint8_t {
  kPeakBf16,
  kPeakFp16,
  kPeakFp8,
  kPeakFp4,
  kHbmBandwidth,
  kGemmBf16,
  kGemmFp8,
  kGemmFp8Blockwise,
  kGemmMxfp8,
  kGemmNvfp4,
  kGroupedGemmBf16,
  kGroupedGemmFp8,
  kGroupedGemmFp8Blockwise,
  kGroupedGemmMxfp8,
  kGroupedGemmNvfp4,
  kAttentionForward,
  kAttentionBackward,
  kMeasuredGemm,
  kMeasuredGroupedGemm,
  kMeasuredAttentionForward,
  kMeasuredAttentionBackward,
  kMemory,
  kPermute,
  kCrossEntropy,
  kCrossEntropyFused,
  kHostLaunch,
  kHostNativeLaunch,
  kHostExpertGemmLaunch,
  kHostSync,
  kSustainedFraction,
  kGemmKHalf,
  kCount,
};
inline constexpr size_t kNumFigures = static_cast<size_t>(Figure::kCount);

using FigureSet = std::bitset<kNumFigures>;

// "/efficiency/gemm/bf16", ...
const char* figure_pointer(Figure figure);

// The plateau figure of a GEMM format (grouped: the grouped_gemm one).
Figure gemm_figure(GemmFormat format, bool grouped);

// The peak figure a format's FLOPs are measured against.
Figure peak_figure(GemmFormat format, Dtype dtype);

// The provenance of a figure: the entry of its pointer or of its nearest
// ancestor; nullptr when none covers it.
const Provenance* figure_provenance(const SystemSpec& system, const std::string& pointer);

}  // namespace trainsim
