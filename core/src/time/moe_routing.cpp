#include "time/moe_routing.h"

#include <algorithm>

#include "time/collectives.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

// C(total - excluded, picks) / C(total, picks): no pick lands in the excluded items.
double none_chosen(double total, double excluded, int64_t picks) {
  double p = 1.0;
  for (int64_t i = 0; i < picks && p > 0.0; ++i) {
    p *= std::max(0.0, (total - excluded - d(i)) / (total - d(i)));
  }
  return p;
}

}  // namespace

double distinct_nodes_per_token(const MoeSpec& moe, int64_t nodes) {
  const double n = d(nodes);
  const double experts = d(moe.num_experts);
  const int64_t k = moe.top_k;
  const int64_t groups = moe.router_num_groups;
  const int64_t chosen = moe.router_group_topk;
  if (nodes <= 1) return 1.0;
  if (groups > 0 && chosen > 0 && chosen < groups) {
    if (groups % nodes == 0) {
      return n * (1.0 - none_chosen(d(groups), d(groups / nodes), chosen));
    }
    if (nodes % groups == 0) {
      const double reachable = d(chosen * (nodes / groups));
      const double pool = experts * d(chosen) / d(groups);
      return reachable * (1.0 - none_chosen(pool, pool / reachable, k));
    }
  }
  return n * (1.0 - none_chosen(experts, experts / n, k));
}

int64_t ep_nodes(const Config& config) {
  const ParallelSpec& p = config.training.parallel;
  const int64_t span = group_geometry(Group::kEp, p, p.tp * p.pp * p.dp * p.cp).span();
  const int64_t per_node = std::max<int64_t>(1, config.system.gpus_per_node);
  return span > per_node ? (span + per_node - 1) / per_node : 1;
}

double routed_all_to_all_scale(const Config& config, int64_t nodes) {
  if (!config.model.moe || config.training.moe.dispatcher != MoeDispatcher::kFlex) return 1.0;
  const MoeSpec& moe = *config.model.moe;
  // Across nodes the NICs carry one copy per destination node; inside one NVLink
  // domain one copy per destination rank (experts spread evenly over the ep ranks,
  // so ranks are bins like nodes in distinct_nodes_per_token).
  const int64_t bins = nodes > 1 ? nodes : config.training.parallel.ep;
  if (bins <= 1) return 1.0;
  return std::min(1.0, distinct_nodes_per_token(moe, bins) / d(moe.top_k));
}

}  // namespace trainsim
