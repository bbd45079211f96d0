// Closed-form activation formulas from the literature, reported next to the
// op-level estimate so users can compare with what papers and Megatron-LM's
// own report print. They assume a GPT block (ffn = 4h, GeLU, multi-head
// attention, 2-byte activations and 1-byte dropout masks) and the first
// pipeline stage holding L/pp layers for pp micro-batches.
#pragma once

#include "trainsim/spec.h"

namespace trainsim {

// Korthikanti et al. 2022 (arXiv:2205.05198) activation bytes of the first
// stage: L * per_layer * (1 + (pp-1)/(pp*vpp) when interleaved), with
// per_layer = sbh(10 + 24/t + 5as/(ht))  Eq. 2 (tensor parallel)
//           = sbh/t (34 + 5as/h)         Eq. 4 (+ sequence parallel)
//           = sbh(10 + 24/t)             Eq. 5 (selective recompute)
//           = 34 sbh / t                 Eq. 6 (sequence parallel + selective)
//           = 2 sbh (/t with SP)         full recompute (the stored layer input)
double korthikanti_activation_bytes(const ModelSpec& model, const TrainingSpec& training);

// Megatron-LM's report_theoretical_memory (megatron/training/
// theoretical_memory_usage.py): weights + optimizer of the most loaded stage
// (18 B/param, or 6 + 12/dp with the distributed optimizer) plus its
// activation formula (SP + selective recompute variant, else the 1.05-scaled
// variant without SP).
double megatron_theoretical_memory_bytes(const ModelSpec& model, const TrainingSpec& training);

}  // namespace trainsim
