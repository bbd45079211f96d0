// Attention half of a transformer layer (input norm through output projection).
#pragma once

#include "model/op.h"
#include "model/op_factory.h"
#include "model/recompute_flags.h"

namespace trainsim {

void append_attention_ops(OpList& ops, const OpFactory& factory, const LayerRecompute& recompute);

}  // namespace trainsim
