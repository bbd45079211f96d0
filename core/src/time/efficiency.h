// Achieved fraction of peak FLOP/s for one pass of a compute-bound op.
// Order: a measured table entry for the exact shape (SimuMax's key format,
// e.g. "b=1, m=4096, k=8192, n=10240, layout=TN, accumulate=False,
// out_dtype=bf16"), else the system's shape model, else the class's flat value.
#pragma once

#include <string>

#include "model/op.h"
#include "trainsim/spec.h"

namespace trainsim {

struct EfficiencyLookup {
  double efficiency = 0.0;
  bool measured = false;  ///< came from a measured table
};

EfficiencyLookup compute_efficiency(const Op& op, Pass pass, const SystemSpec& system,
                                    const TrainingSpec& training);

// The SimuMax-format key of an op's pass ("" when the op has no table).
std::string efficiency_key(const Op& op, Pass pass, const TrainingSpec& training);

// Shape model of dense GEMM efficiency (used when no measured entry exists):
//   eff = gemm * u_wave * m/(m+h) * n/(n+h) * k/(k+h)
// u_wave = tiles / (waves * SMs) with tiles = ceil(m/tile_m) * ceil(n/tile_n)
// (wave quantization, NVIDIA "Matrix Multiplication Background" user guide);
// h = gemm_half_size is the dimension at which a GEMM reaches half its
// asymptotic efficiency (small-dimension penalty).
double gemm_shape_efficiency(const EfficiencySpec& spec, double m, double n, double k,
                             double groups);

}  // namespace trainsim
