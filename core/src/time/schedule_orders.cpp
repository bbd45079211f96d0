#include "time/schedule_orders.h"

#include <algorithm>
#include <string>

#include "trainsim/issue.h"

namespace trainsim {
namespace {

std::string str(int64_t value) { return std::to_string(value); }

// Orders are int32-indexed; the runner also caps passes at 2^28.
constexpr int64_t kMaxPasses = int64_t{1} << 26;

}  // namespace

const char* pipeline_schedule_name(PipelineScheduleKind kind) {
  return kPipelineScheduleNames[static_cast<size_t>(kind)];
}

std::optional<PipelineScheduleKind> parse_pipeline_schedule(std::string_view name) {
  for (size_t i = 0; i < kPipelineScheduleNames.size(); ++i) {
    if (name == kPipelineScheduleNames[i]) return static_cast<PipelineScheduleKind>(i);
  }
  return std::nullopt;
}

std::string schedule_supported(PipelineScheduleKind kind, int64_t pp, int64_t vpp, int64_t m) {
  const std::string name = pipeline_schedule_name(kind);
  if (pp < 1) return name + " needs pp >= 1, got " + str(pp);
  if (vpp < 1) return name + " needs vpp >= 1, got " + str(vpp);
  if (m < 1) return name + " needs at least 1 micro-batch, got " + str(m);
  if (pp > kMaxPasses || vpp > kMaxPasses || m > kMaxPasses || pp * vpp * m > kMaxPasses) {
    return name + " is limited to 2^26 passes (pp * vpp * micro-batches), got " + str(pp) + " * " +
           str(vpp) + " * " + str(m);
  }
  auto need_vpp = [&](int64_t expected) {
    return vpp == expected ? std::string()
                           : name + " needs vpp " + str(expected) + ", got " + str(vpp);
  };
  auto need_micro_batches = [&](int64_t at_least, const char* formula) {
    return m >= at_least ? std::string()
                         : name + " needs at least " + formula + " (" + str(at_least) +
                               ") micro-batches, got " + str(m);
  };
  std::string reason;
  switch (kind) {
    case PipelineScheduleKind::kOneFOneB:
      // pipeline_schedule_supported(): the interleaved replay needs groups of pp.
      if (vpp > 1 && pp > 1 && m % pp != 0) {
        reason = "interleaved 1f1b needs a number of micro-batches that is a multiple of pp (" +
                 str(pp) + "), got " + str(m);
      }
      break;
    case PipelineScheduleKind::kZeroBubbleH1:
    case PipelineScheduleKind::kZeroBubbleH2:
    case PipelineScheduleKind::kZeroBubbleV:
      // zbpp_utils.py validate_arguments: "zero bubble must be enabled with pipeline
      // parallelism"; V schedules set virtual_pipeline_model_parallel_size = 2.
      if (pp < 2) return name + " needs pp >= 2, got " + str(pp);
      reason = need_vpp(kind == PipelineScheduleKind::kZeroBubbleV ? 2 : 1);
      // efficiency.py get_hand_schedule (arxiv branch): assert _n >= 2 * _p; ZB-H1
      // is generalised below that (warm-up capped at m as 1F1B does).
      if (reason.empty() && kind == PipelineScheduleKind::kZeroBubbleH2) {
        reason = need_micro_batches(2 * pp, "2 * pp");
      }
      break;
    case PipelineScheduleKind::kDualPipe:
      // dualpipe.py DualPipe.step: num_ranks % 2 == 0, num_chunks % 2 == 0 and
      // num_chunks >= num_ranks * 2. Its two chunks per rank are whole stages.
      if (pp % 2 != 0) return name + " needs an even pp, got " + str(pp);
      reason = need_vpp(1);
      if (reason.empty() && m % 2 != 0) {
        reason = name + " needs an even number of micro-batches, got " + str(m);
      }
      if (reason.empty()) reason = need_micro_batches(2 * pp, "2 * pp");
      break;
    case PipelineScheduleKind::kDualPipeV:
      // dualpipev.py DualPipeV.step: num_chunks >= num_ranks * 2; a V of 2 chunks.
      reason = need_vpp(2);
      if (reason.empty()) reason = need_micro_batches(2 * pp, "2 * pp");
      break;
  }
  return reason;
}

ScheduleOrders make_schedule_orders(PipelineScheduleKind kind, int64_t pp, int64_t vpp, int64_t m,
                                    const OrderOptions& options) {
  const std::string reason = schedule_supported(kind, pp, vpp, m);
  TRAINSIM_CHECK(reason.empty(), "pipeline schedule: " + reason);
  const auto p = static_cast<int32_t>(pp);
  const auto v = static_cast<int32_t>(vpp);
  const auto n = static_cast<int32_t>(m);
  switch (kind) {
    case PipelineScheduleKind::kOneFOneB:
      return detail::megatron_orders(p, v, n, options.explicit_p2p);
    case PipelineScheduleKind::kZeroBubbleH1:
      return detail::zero_bubble_h_orders(p, n, 1);
    case PipelineScheduleKind::kZeroBubbleH2:
      return detail::zero_bubble_h_orders(p, n, 2);
    case PipelineScheduleKind::kZeroBubbleV:
      return detail::zero_bubble_v_orders(p, n, options);
    case PipelineScheduleKind::kDualPipe:
      return detail::dualpipe_orders(p, n);
    case PipelineScheduleKind::kDualPipeV:
      return detail::dualpipe_v_orders(p, n);
  }
  TRAINSIM_CHECK(false, "pipeline schedule: unknown kind");
  return {};
}

ScheduleMemoryNeeds schedule_memory_needs(PipelineScheduleKind kind, int64_t pp, int64_t vpp,
                                          int64_t m, const OrderOptions& options) {
  const ScheduleOrders orders = make_schedule_orders(kind, pp, vpp, m, options);
  ScheduleMemoryNeeds needs;
  const auto p = static_cast<int32_t>(pp);
  needs.chunk_stage.assign(static_cast<size_t>(p), {});
  for (int32_t r = 0; r < p; ++r) {
    auto& row = needs.chunk_stage[static_cast<size_t>(r)];
    for (int32_t c = 0; c < orders.num_chunks; ++c) {
      switch (kind) {
        case PipelineScheduleKind::kZeroBubbleV:
        case PipelineScheduleKind::kDualPipeV:
          row.push_back(c == 0 ? r : 2 * p - 1 - r);
          break;
        case PipelineScheduleKind::kDualPipe:
          row.push_back(c == 0 ? r : p - 1 - r);
          break;
        default:
          row.push_back(c * p + r);
      }
    }
  }
  needs.num_model_stages = kind == PipelineScheduleKind::kDualPipe ? p : p * orders.num_chunks;
  needs.parameter_copies = kind == PipelineScheduleKind::kDualPipe ? 2 : 1;
  needs.ranks = activation_peaks(orders, options.weight_kept_fraction);
  return needs;
}

namespace detail {

ScheduleOrders megatron_placement(int32_t pp, int32_t vpp, int32_t m) {
  ScheduleOrders o;
  o.pp = pp;
  o.num_chunks = vpp;
  o.num_micro_batches = m;
  o.num_virtual_stages = pp * vpp;
  o.actions.resize(static_cast<size_t>(pp));
  for (int32_t v = 0; v < pp * vpp; ++v) {
    const bool hop = pp > 1 && v + 1 < pp * vpp;  // link v % pp; the last one wraps to rank 0
    o.route_stages.push_back({v % pp, v / pp, hop ? v % pp : -1});
  }
  return o;
}

ScheduleOrders v_placement(int32_t pp, int32_t m) {
  ScheduleOrders o;
  o.pp = pp;
  o.num_chunks = 2;
  o.num_micro_batches = m;
  o.num_virtual_stages = 2 * pp;
  o.actions.resize(static_cast<size_t>(pp));
  for (int32_t v = 0; v < pp; ++v) o.route_stages.push_back({v, 0, v + 1 < pp ? v : -1});
  for (int32_t v = pp; v < 2 * pp; ++v) {  // back up: rank 2pp - 1 - v, link to the rank below
    const int32_t rank = 2 * pp - 1 - v;
    o.route_stages.push_back({rank, 1, rank > 0 ? rank - 1 : -1});
  }
  return o;
}

// Handcrafted ZB-H1 (warmup_factor 1) and ZB-H2 (2), as efficiency.py
// get_hand_schedule builds them (sail-sg/zero-bubble-pipeline-parallelism, arxiv
// branch): rank r runs (pp - r - 1) * factor warm-up forwards, then per
// micro-batch i an F (while any is left) and B(i), plus W(i - r * factor) once
// i >= r * factor, and the remaining W at the end. Warm-up is capped at m like
// Megatron's 1F1B (only matters for ZB-H1, ZB-H2 needs m >= 2 pp).
ScheduleOrders zero_bubble_h_orders(int32_t pp, int32_t m, int32_t warmup_factor) {
  ScheduleOrders o = megatron_placement(pp, 1, m);
  for (int32_t r = 0; r < pp; ++r) {
    std::vector<Action>& list = o.actions[static_cast<size_t>(r)];
    const int32_t warmup = (pp - r - 1) * warmup_factor;
    const int32_t deferred = r * warmup_factor;  // (pp - 1) * factor - warmup
    int32_t next_f = 0;
    int32_t next_w = 0;
    for (; next_f < std::min(warmup, m); ++next_f)
      list.push_back({ActionKind::kForward, false, 0, next_f});
    for (int32_t i = 0; i < m; ++i) {
      if (warmup + i < m) list.push_back({ActionKind::kForward, false, 0, next_f++});
      list.push_back({ActionKind::kBackward, false, 0, i});
      if (i >= deferred) list.push_back({ActionKind::kWeight, false, 0, next_w++});
    }
    for (; next_w < m; ++next_w) list.push_back({ActionKind::kWeight, false, 0, next_w});
  }
  return o;
}

}  // namespace detail
}  // namespace trainsim
