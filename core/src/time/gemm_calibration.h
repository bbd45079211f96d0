// Per-GPU calibration of the GEMM shape model on measured per-shape tables
// (efficiency.measured.gemm / grouped_gemm: SimuMax's key format, kernels of
// that GPU timed one shape at a time). A shape the table does not hold takes
// the shape model scaled by the residual (measured / modelled) of the nearest
// measured shapes of the same pass, so the shape model carries what it
// captures (wave quantization, K roll-off) and the table what it misses
// (small-M grouped-GEMM scheduling, skinny shapes) on that GPU only.
#pragma once

#include <array>
#include <optional>
#include <vector>

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

// One measured point of a table: the pass geometry (rows m per group,
// columns n, reduction k, groups) and its residual (measured / bf16 model).
struct GemmCalibrationPoint {
  double m = 0.0, n = 0.0, k = 0.0, groups = 1.0;
  double residual = 1.0;
};

// The measured tables of one system parsed into pass geometry and residuals
// once (per estimate: their keys are strings that would otherwise be parsed
// again at every lookup). Built from the system and the run's gradient dtype;
// it holds copies, so it outlives neither and never goes stale within them.
class GemmCalibrationTables {
 public:
  GemmCalibrationTables(const SystemSpec& system, const TrainingSpec& training);

  // nullopt when the system has no shape model (num_sms 0) or holds no measured
  // entry of this op's class (dense or grouped) and pass (bf16 tables for bf16
  // ops; for low-precision formats the bf16 tables' shape dependence, when a
  // dense bf16 table exists).
  std::optional<GemmCalibration> calibrate(const Op& op, Pass pass) const;

 private:
  bool usable_ = false;  ///< a shape model exists to calibrate
  /// [grouped][pass]: the points of that class and pass, of the run's gradient
  /// dtype where the table has it.
  std::array<std::array<std::vector<GemmCalibrationPoint>, kNumPasses>, 2> points_;
  double dense_level_ = 0.0;  ///< median residual of the dense table (0: none)
};

// The same calibration with the tables parsed for this one lookup (tests and
// single lookups; an estimate builds GemmCalibrationTables once).
std::optional<GemmCalibration> calibrate_gemm(const Op& op, Pass pass, const SystemSpec& system,
                                              const TrainingSpec& training);

}  // namespace trainsim
