// How many bytes an expert all-to-all moves, and how much of it crosses nodes.
// collectives.cpp prices an all-to-all over nodes with the uniform share
// (N - 1) / N of its bytes on the inter-node fabric, right for Megatron's alltoall
// dispatcher, which sends each of a token's k copies separately whatever the
// routing. The flex dispatcher
// (DeepEP, deepseek-ai/DeepEP README "internode" kernels; DeepSeek-V3 report
// arXiv:2412.19437 section 3.2.2) sends a token once to each destination node
// over InfiniBand and fans it out over NVLink there (inside one NVLink domain,
// once to each destination rank), and group-limited routing
// (--moe-router-num-groups G / --moe-router-group-topk M, the report's
// node-limited routing, section 2.1.2) bounds the nodes a token reaches.
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

// Expected distinct nodes a token's k expert copies reach, experts spread evenly
// over `nodes` nodes and chosen uniformly (within the M chosen groups when the
// routing is group-limited); trainsim's routing model, hypergeometric counts:
//   no limit:      N (1 - C(E - E/N, k) / C(E, k))
//   G % N == 0:    N (1 - C(G - G/N, M) / C(G, M))          (every chosen group gets a copy)
//   N % G == 0:    n' (1 - C(E' - E'/n', k) / C(E', k)), n' = M N / G nodes, E' = M E / G
double distinct_nodes_per_token(const MoeSpec& moe, int64_t nodes);

// Nodes the expert-parallel group spans (1 inside a node; collectives.h geometry).
int64_t ep_nodes(const Config& config);

// Factor on the bytes of a routed all-to-all (one copy per (token, expert) pair) over
// the expert group, `nodes` the nodes it spans: 1 for Megatron's alltoall dispatcher;
// for flex, distinct destinations / k: the nodes when the group spans several (the NIC
// share, which prices the call), else the ranks, since DeepEP / HybridEP send a token
// once to each rank that holds one of its experts and reduce a rank's expert outputs
// before the combine (deepseek-ai/DeepEP deep_ep/buffer.py get_dispatch_layout:
// num_tokens_per_rank, is_token_in_rank; Megatron-LM
// megatron/core/transformer/moe/token_dispatcher.py MoEFlexTokenDispatcher).
double routed_all_to_all_scale(const Config& config, int64_t nodes);

}  // namespace trainsim
