// Time of one op for one micro-batch: roofline per pass (compute-bound
// FLOPs / (peak * efficiency) vs HBM bytes / (bandwidth * streaming
// efficiency) plus a fixed GPU cost per kernel; the larger wins, as in
// SimuMax's "roofline" mode and Calculon's processor model), the op's
// collectives per pass, and the kernels the host launches for it.
#pragma once

#include <array>

#include "model/op.h"
#include "time/efficiency.h"
#include "time/figures.h"
#include "trainsim/spec.h"

namespace trainsim {

struct CommTimes {
  double tp_s = 0.0;
  double cp_s = 0.0;
  double ep_s = 0.0;  ///< expert all-to-all and expert-tensor-parallel collectives
  double total() const { return tp_s + cp_s + ep_s; }
  CommTimes& operator+=(const CommTimes& other) {
    tp_s += other.tp_s;
    cp_s += other.cp_s;
    ep_s += other.ep_s;
    return *this;
  }
  CommTimes scaled(double factor) const { return {tp_s * factor, cp_s * factor, ep_s * factor}; }
};

struct OpTime {
  std::array<double, kNumPasses> compute_s{};  ///< roofline time per pass
  std::array<CommTimes, kNumPasses> comm{};    ///< collectives per pass
  double recompute_s = 0.0;                    ///< forward re-run inside backward
  CommTimes recompute_comm;                    ///< forward collectives re-issued by the re-run
  std::array<double, kNumPasses> flops{};
  std::array<double, kNumPasses> bytes{};
  /// Kernels the host launches per pass (the op's kernels and collectives; 0 when
  /// the op sits in a captured CUDA graph).
  std::array<double, kNumPasses> launches{};
  /// Host CPU time of those launches per pass (eager, native-loop and expert-GEMM
  /// launches each at their own cost, time/host_time.h).
  std::array<double, kNumPasses> host_s{};
  double recompute_launches = 0.0;
  double recompute_host_s = 0.0;
  FigureSet host_figures;  ///< the host launch figures its launches use
  bool captured = false;                       ///< inside a captured CUDA graph
  bool host_sync = false;                      ///< the host waits for the GPU after its forward
  int measured_lookups = 0;                    ///< passes priced from a measured table
  int model_lookups = 0;                       ///< passes priced from the shape model / table
  double compute_only_s = 0.0;                 ///< all passes: the compute-bound part (for efficiency)
  EfficiencySource source = EfficiencySource::kShapeModel;
  bool memory_bound = true;                    ///< every pass was bound by its bytes
  FigureSet figures;                           ///< system figures it used
};

OpTime op_time(const Op& op, const Config& config);
// The same with the measured GEMM tables parsed once per estimate (block_op_times).
OpTime op_time(const Op& op, const Config& config, const GemmCalibrationTables& tables);

// HBM-bound time of `bytes` in `kernels` kernels of the given class.
double memory_kernel_time_s(double bytes, const MemoryKernelSpec& kernel, const GpuSpec& gpu,
                            double kernels = 1.0);

}  // namespace trainsim
