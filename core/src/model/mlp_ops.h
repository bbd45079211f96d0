// MLP half of a transformer layer (pre-MLP norm through the MLP or MoE block).
#pragma once

#include "model/op.h"
#include "model/op_factory.h"
#include "model/recompute_flags.h"

namespace trainsim {

void append_mlp_ops(OpList& ops, const OpFactory& factory, bool moe_layer,
                    const LayerRecompute& recompute);

}  // namespace trainsim
