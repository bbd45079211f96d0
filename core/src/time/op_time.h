// Time of one op for one micro-batch: roofline per pass (compute-bound
// FLOPs / (peak * efficiency) vs HBM bytes / (bandwidth * efficiency) plus a
// per-kernel latency; the larger wins, as in SimuMax's "roofline" mode and
// Calculon's processor model), plus the op's collectives per pass.
#pragma once

#include <array>

#include "model/op.h"
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
  int measured_lookups = 0;  ///< passes priced from a measured table
  int model_lookups = 0;     ///< passes priced from the shape model / flat value
};

OpTime op_time(const Op& op, const Config& config);

// HBM-bound time of `bytes` in one kernel of the given class.
double memory_kernel_time_s(double bytes, const MemoryKernelSpec& kernel, const GpuSpec& gpu);

}  // namespace trainsim
