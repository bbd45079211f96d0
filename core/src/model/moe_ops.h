// The MoE block of a transformer layer (Megatron-Core MoELayer): shared
// experts, router with its load-balancing work, token dispatch, grouped expert
// GEMMs, combine. Tokens follow the routing the config describes: dropless or
// capped at the expert capacity (dropped tokens cost nothing), balanced or with
// the busiest expert-parallel rank receiving routing_imbalance times its share.
#pragma once

#include <cstdint>

#include "model/op.h"
#include "model/op_factory.h"
#include "model/recompute_flags.h"

namespace trainsim {

// Routed (token, expert) copies per micro-batch of `tokens` local tokens.
struct RoutedTokens {
  int64_t sent = 0;      ///< copies this rank dispatches
  int64_t received = 0;  ///< copies its local experts process (the busiest rank's)
};

// Megatron moe_utils.py get_capacity: capacity = ceil(tokens * top_k / experts * factor)
// per expert and sending rank; over capacity a token copy is dropped (router.py
// apply_token_drop), with --moe-pad-expert-input-to-capacity every expert gets exactly
// capacity rows. Dropless, the busiest rank receives routing_imbalance times the
// balanced top_k * tokens; with a capacity at most capacity_factor times (each of its
// experts takes at most ep * capacity copies).
RoutedTokens routed_tokens(const ModelSpec& model, const TrainingSpec& training, int64_t tokens);

void append_moe(OpList& ops, const OpFactory& factory, const LayerRecompute& recompute);

}  // namespace trainsim
