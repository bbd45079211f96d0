// MLP half of a transformer layer (pre-MLP norm through the MLP or MoE block).
#pragma once

#include "model/op.h"
#include "model/op_factory.h"
#include "model/recompute_flags.h"

namespace trainsim {

// fc1 -> activation -> fc2 of width ffn: the dense MLP, or (shared) the shared
// experts of a MoE layer.
void append_dense_mlp(OpList& ops, const OpFactory& factory, const LayerRecompute& recompute,
                      int64_t ffn, bool shared);

void append_mlp_ops(OpList& ops, const OpFactory& factory, bool moe_layer,
                    const LayerRecompute& recompute);

}  // namespace trainsim
