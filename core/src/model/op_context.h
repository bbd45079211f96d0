// Derived sizes shared by the op builders: local sequence lengths under
// SP/CP, padded vocabulary, fp8, Transformer Engine feature gates.
#pragma once

#include <cstdint>

#include "model/op.h"
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
  bool fp8 = false;      ///< GEMMs run in a low-precision format (fp8 or fp4)
  GemmFormat format = GemmFormat::kBf16;
  double act_bytes = 2.0;  ///< bytes per element of a quantised GEMM operand (2 for bf16)
  /// Bytes per parameter of a linear's weight: bf16 (2), with fp8/fp4 either the
  /// stored low-precision weight (--fp8-param-gather) or bf16 plus its cached
  /// rowwise and columnwise quantised copies (Transformer Engine, see op_context.cpp).
  double weight_bytes = 2.0;
  bool block_scaled_hw = false;  ///< the GPU has MX/NV block-scaled tensor cores (set by the time model)
  // Transformer Engine version gates (TE release notes; SimuMax strategy config):
  bool te_dummy_wgrad = false;          ///< >= 2.3: persistent dummy wgrad buffer per weight shape
  bool te_dummy_wgrad_grouped = false;  ///< >= 2.10: the same for grouped linears
  bool te_cp_saves_output = false;      ///< >= 2.8: CP all-to-all attention keeps its output
  int64_t grad_bytes = 4;               ///< main-grad element size

  OpContext(const ModelSpec& m, const TrainingSpec& t);
  // Which CUDA-graph module an op of `scope` falls in is captured (host launch free).
  bool captured(GraphScope scope) const;
  int64_t tokens_local() const { return b * seq_local; }
  int64_t tokens_gemm() const { return b * seq_gemm; }
};

// Whether ops of `scope` run inside a captured CUDA graph (Megatron-LM
// --cuda-graph-impl / --cuda-graph-modules; transformer_config.py rules).
bool graph_captured(GraphScope scope, const TrainingSpec& training);

}  // namespace trainsim
