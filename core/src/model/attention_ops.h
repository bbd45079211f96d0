// Attention half of a transformer layer (input norm through output projection).
#pragma once

#include "model/op.h"
#include "model/op_factory.h"
#include "model/recompute_flags.h"

namespace trainsim {

// score_fraction: the share of the causal attention scores the layer computes
// (1 for full attention, less for a sliding window: model/attention_window.h).
void append_attention_ops(OpList& ops, const OpFactory& factory, const LayerRecompute& recompute,
                          double score_fraction = 1.0);

}  // namespace trainsim
