// Attention kernel efficiency from a GPU's published kernel benchmarks:
// achieved fraction of the dense bf16 peak on EXECUTED FLOPs (a causal kernel
// counts the computed half), by pass, head dim, masking and sequence length.
// The tables in the presets come from FlashAttention-2/3/4 and cuDNN
// benchmarks and from Transformer Engine measurements (each cited there).
#pragma once

#include <cstdint>
#include <vector>

#include "trainsim/spec.h"

namespace trainsim {

// Efficiency at (head_dim, causal, seq_len): linear in log2(seq_len) along a
// curve (clamped at its ends), linear in head_dim between the two nearest
// curves (clamped), the other masking's curves when none has this masking.
// 0 when the table is empty.
double attention_table_efficiency(const std::vector<AttentionCurve>& table, int64_t head_dim,
                                  bool causal, double seq_len);

// Share of the SMs kept busy by `tiles` thread blocks of equal work (the last
// wave runs partly empty): tiles / (ceil(tiles / SMs) * SMs). Flash attention
// runs one block per (batch, head, 128-query tile) (Dao 2023, Sec. 3.2).
double attention_wave_utilization(double tiles, int64_t num_sms);

}  // namespace trainsim
