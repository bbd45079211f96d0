// Per-GPU calibration of the GEMM shape model on measured per-shape tables
// (efficiency.measured.gemm / grouped_gemm: SimuMax's key format, kernels of
// that GPU timed one shape at a time). A shape the table does not hold takes
// the shape model scaled by the residual (measured / modelled) of the nearest
// measured shapes of the same pass, so the shape model carries what it
// captures (wave quantization, K roll-off) and the table what it misses
// (small-M grouped-GEMM scheduling, skinny shapes) on that GPU only.
#pragma once

#include <optional>

#include "model/op.h"
#include "trainsim/spec.h"

namespace trainsim {

struct GemmCalibration {
  /// Interpolated residual: the measured efficiency over the shape model's
  /// (plateau x shape factor, no sustained fraction) at this op's pass.
  double residual = 1.0;
  /// The median residual of the dense table (its large-shape level), for
  /// formats the table did not measure: their plateau keeps its own level and
  /// takes only the shape dependence (residual / dense_level).
  double dense_level = 1.0;
};

// nullopt when the system has no shape model (num_sms 0) or holds no measured entry of this op's class (dense
// or grouped) and dtype family (bf16 tables for bf16 ops; for low-precision
// formats the bf16 tables' shape dependence, when a dense bf16 table exists).
// `model(m, n, k, groups)` is the shape model's efficiency (plateau x shape
// factor) of one pass in the pass's own (m, n, k).
std::optional<GemmCalibration> calibrate_gemm(const Op& op, Pass pass, const SystemSpec& system,
                                              const TrainingSpec& training);

}  // namespace trainsim
