#include "time/figures.h"

namespace trainsim {

const char* figure_pointer(Figure figure) {
  switch (figure) {
    case Figure::kPeakBf16: return "/gpu/peak_tflops/bf16";
    case Figure::kPeakFp16: return "/gpu/peak_tflops/fp16";
    case Figure::kPeakFp8: return "/gpu/peak_tflops/fp8";
    case Figure::kPeakFp4: return "/gpu/peak_tflops/fp4";
    case Figure::kHbmBandwidth: return "/gpu/hbm_bandwidth_gb_per_s";
    case Figure::kGemmBf16: return "/efficiency/gemm/bf16";
    case Figure::kGemmFp8: return "/efficiency/gemm/fp8";
    case Figure::kGemmFp8Blockwise: return "/efficiency/gemm/fp8_blockwise";
    case Figure::kGemmMxfp8: return "/efficiency/gemm/mxfp8";
    case Figure::kGemmNvfp4: return "/efficiency/gemm/nvfp4";
    case Figure::kGroupedGemmBf16: return "/efficiency/grouped_gemm/bf16";
    case Figure::kGroupedGemmFp8: return "/efficiency/grouped_gemm/fp8";
    case Figure::kGroupedGemmFp8Blockwise: return "/efficiency/grouped_gemm/fp8_blockwise";
    case Figure::kGroupedGemmMxfp8: return "/efficiency/grouped_gemm/mxfp8";
    case Figure::kGroupedGemmNvfp4: return "/efficiency/grouped_gemm/nvfp4";
    case Figure::kAttentionForward: return "/efficiency/attention/forward";
    case Figure::kAttentionBackward: return "/efficiency/attention/backward";
    case Figure::kMeasuredGemm: return "/efficiency/measured/gemm";
    case Figure::kMeasuredGroupedGemm: return "/efficiency/measured/grouped_gemm";
    case Figure::kMeasuredAttentionForward: return "/efficiency/measured/attention_forward";
    case Figure::kMeasuredAttentionBackward: return "/efficiency/measured/attention_backward";
    case Figure::kMemory: return "/efficiency/memory";
    case Figure::kPermute: return "/efficiency/permute";
    case Figure::kCrossEntropy: return "/efficiency/cross_entropy";
    case Figure::kCrossEntropyFused: return "/efficiency/cross_entropy_fused";
    case Figure::kHostLaunch: return "/efficiency/host/launch_us";
    case Figure::kHostNativeLaunch: return "/efficiency/host/native_launch_us";
    case Figure::kHostExpertGemmLaunch: return "/efficiency/host/expert_gemm_launch_us";
    case Figure::kHostSync: return "/efficiency/host/sync_us";
    case Figure::kSustainedFraction: return "/efficiency/sustained_fraction";
    case Figure::kGemmKHalf: return "/efficiency/gemm_k_half";
    case Figure::kCount: break;
  }
  return "";
}

Figure gemm_figure(GemmFormat format, bool grouped) {
  const auto base = static_cast<uint8_t>(grouped ? Figure::kGroupedGemmBf16 : Figure::kGemmBf16);
  return static_cast<Figure>(base + static_cast<uint8_t>(format));
}

Figure peak_figure(GemmFormat format, Dtype dtype) {
  switch (format) {
    case GemmFormat::kBf16:
      return dtype == Dtype::kFp16 ? Figure::kPeakFp16 : Figure::kPeakBf16;
    case GemmFormat::kNvfp4:
      return Figure::kPeakFp4;
    default:
      return Figure::kPeakFp8;
  }
}

const Provenance* figure_provenance(const SystemSpec& system, const std::string& pointer) {
  std::string at = pointer;
  while (!at.empty()) {
    const auto it = system.provenance.find(at);
    if (it != system.provenance.end()) return &it->second;
    const auto slash = at.rfind('/');
    if (slash == std::string::npos) break;
    at.resize(slash);
  }
  return nullptr;
}

}  // namespace trainsim
