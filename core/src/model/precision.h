// The precision a training runs its GEMMs in, and what that means for the
// bytes its operands and weights take.
#pragma once

#include "trainsim/spec.h"

namespace trainsim {

// The GEMM kernel format of the linear layers: bf16 (also fp16), per-tensor
// fp8 (delayed and tensorwise recipes), blockwise fp8, mxfp8, or nvfp4 (dtype
// fp4). The output layer always runs in bf16 (Megatron-LM keeps it out of
// fp8/fp4 autocast).
GemmFormat gemm_format(const TrainingSpec& training);

// Bytes per element of a GEMM operand in `format` (fp4: two per byte).
double operand_bytes(GemmFormat format);

// True for the low-precision formats (anything but bf16).
inline bool is_low_precision(GemmFormat format) { return format != GemmFormat::kBf16; }

}  // namespace trainsim
