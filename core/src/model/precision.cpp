#include "model/precision.h"

namespace trainsim {

GemmFormat gemm_format(const TrainingSpec& training) {
  switch (training.dtype) {
    case Dtype::kBf16:
    case Dtype::kFp16:
      return GemmFormat::kBf16;
    case Dtype::kFp4:
      return GemmFormat::kNvfp4;
    case Dtype::kFp8:
      break;
  }
  switch (training.fp8_recipe) {
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kTensorwise:
      return GemmFormat::kFp8;
    case Fp8Recipe::kBlockwise:
      return GemmFormat::kFp8Blockwise;
    case Fp8Recipe::kMxfp8:
      return GemmFormat::kMxfp8;
  }
  return GemmFormat::kFp8;
}

double operand_bytes(GemmFormat format) {
  switch (format) {
    case GemmFormat::kBf16:
      return 2.0;
    case GemmFormat::kNvfp4:
      return 0.5;
    default:
      return 1.0;
  }
}

}  // namespace trainsim
