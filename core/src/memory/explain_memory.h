// Explanations of each stage's memory parts (Estimate::explanations), from the
// figures the memory estimators computed them with.
#pragma once

#include <vector>

#include "memory/stage_statics.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// The activation peak of a stage, as stage_memory.cpp found it.
struct ActivationPeakFigures {
  double others_bytes = 0.0;          ///< activations of the other live micro-batch chunks
  double running_bytes = 0.0;         ///< the running micro-batch's live bytes at the peak op
  double stored_per_chunk_bytes = 0.0;  ///< what one micro-batch keeps per chunk (1F1B, vpp 1)
  bool one_f_one_b = false;           ///< others = (in_flight - 1) x stored_per_chunk
};

// Parameters, gradients, optimizer states, buffers, activations, transient and the
// allocated peak of one stage (filled StageMemory s).
void explain_stage_allocated(const Config& config, const StageStatics& statics,
                             const ActivationPeakFigures& peak, const StageMemory& s,
                             std::vector<Explanation>& out);

// Reserved, outside-allocator and device bytes, after the allocator replay.
void explain_stage_device(const StageMemory& s, std::vector<Explanation>& out);

}  // namespace trainsim
