// Derived sizes shared by the op builders: local sequence lengths under
// SP/CP, padded vocabulary, fp8, Transformer Engine feature gates.
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

struct OpContext {
  const ModelSpec& model;
  const TrainingSpec& training;
  int64_t b = 1;          ///< micro-batch size
  int64_t tp = 1, cp = 1, ep = 1, etp = 1;
  bool sp = false;        ///< sequence parallel (a no-op at tp = 1)
  int64_t seq_cp = 0;     ///< seq_len / cp: tokens of one sequence on this cp rank
  int64_t seq_local = 0;  ///< residual-stream tokens per rank (seq_cp / tp under SP)
  int64_t seq_gemm = 0;   ///< tokens a column-parallel GEMM sees (all-gathered under SP)
  int64_t vocab = 0;      ///< padded vocabulary
  bool fp8 = false;
  // Transformer Engine version gates (TE release notes; SimuMax strategy config):
  bool te_dummy_wgrad = false;          ///< >= 2.3: persistent dummy wgrad buffer per weight shape
  bool te_dummy_wgrad_grouped = false;  ///< >= 2.10: the same for grouped linears
  bool te_cp_saves_output = false;      ///< >= 2.8: CP all-to-all attention keeps its output
  int64_t grad_bytes = 4;               ///< main-grad element size

  OpContext(const ModelSpec& m, const TrainingSpec& t);
  int64_t tokens_local() const { return b * seq_local; }
  int64_t tokens_gemm() const { return b * seq_gemm; }
};

}  // namespace trainsim
