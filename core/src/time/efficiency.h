// Achieved fraction of peak FLOP/s for one pass of a compute-bound op, and
// which system figure it rests on. Order: a measured table entry for the exact
// shape (SimuMax's key format, e.g. "b=1, m=4096, k=8192, n=10240, layout=TN,
// accumulate=False, out_dtype=bf16"), else the GEMM shape model on the kernel
// format's plateau, else the attention kernel table.
#pragma once

#include <string>

#include "model/op.h"
#include "time/figures.h"
#include "time/gemm_calibration.h"
#include "trainsim/spec.h"

namespace trainsim {

enum class EfficiencySource : uint8_t { kMeasuredTable, kShapeModel, kTable };

struct EfficiencyLookup {
  double efficiency = 0.0;
  bool measured = false;  ///< came from a measured table
  EfficiencySource source = EfficiencySource::kShapeModel;
  Figure figure = Figure::kCount;  ///< the system figure it scales (kCount: none)
  /// The measured table that calibrated the shape model's shape dependence (kCount: none).
  Figure calibration_figure = Figure::kCount;
};

EfficiencyLookup compute_efficiency(const Op& op, Pass pass, const SystemSpec& system,
                                    const TrainingSpec& training);
// The same with the system's measured GEMM tables parsed once beforehand (an
// estimate builds them once: GemmCalibrationTables(system, training)).
EfficiencyLookup compute_efficiency(const Op& op, Pass pass, const SystemSpec& system,
                                    const TrainingSpec& training, const GemmCalibrationTables& tables);

// The SimuMax-format key of an op's pass ("" when the op has no table).
std::string efficiency_key(const Op& op, Pass pass, const TrainingSpec& training);

// Dense peak FLOP/s of a GEMM format (bf16 plateau: the bf16 or fp16 peak).
double format_peak_flops(GemmFormat format, const GpuSpec& gpu, Dtype dtype);

// GEMM shape model (NVIDIA "Matrix Multiplication Background" user guide,
// DU-09799-001, Sec. 3 tile and wave quantization; the K roll-off as derived in
// efficiency.cpp):
//   eff = plateau * u_wave(m, n) * k / (k + k0)
// u_wave = tiles / (waves * SMs), tiles = groups * ceil(m/tile_m) * ceil(n/tile_n);
// k0 = peak / HBM bandwidth (FLOP per byte, the roofline ridge): the per-tile
// prologue/epilogue (loading and storing the output tile) costs about as much
// as k0 steps of the K loop. Returns the factor multiplying the plateau.
double gemm_shape_factor(const EfficiencySpec& spec, double k0, double m, double n, double k,
                         double groups);

}  // namespace trainsim
