#include "time/pipeline_run.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "time/pipeline_schedule.h"
#include "time/schedule_orders.h"
#include "trainsim/issue.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

StageP2pTimes stage_p2p(int64_t stage, int64_t pp, const std::vector<double>& boundary) {
  StageP2pTimes t;
  if (pp == 1) return t;
  const auto s = static_cast<size_t>(stage);
  t.forward_recv_s = stage == 0 ? 0.0 : boundary[s - 1];
  t.forward_send_s = stage == pp - 1 ? 0.0 : boundary[s];
  t.backward_recv_s = t.forward_send_s;
  t.backward_send_s = t.forward_recv_s;
  return t;
}

// Megatron's transfers of one micro-batch on a stage: every virtual chunk
// receives and sends in both directions except the very first and last chunk
// of the model; later (earlier) chunks of the first (last) stage cross the wrap.
double megatron_p2p_per_micro_batch_s(int64_t stage, int64_t pp, int64_t vpp,
                                      const std::vector<double>& boundary) {
  if (pp == 1) return 0.0;
  const StageP2pTimes own = stage_p2p(stage, pp, boundary);
  const double wrap = boundary.back();
  double total = own.forward_recv_s + own.forward_send_s + own.backward_recv_s + own.backward_send_s;
  const double in = stage == 0 ? wrap : own.forward_recv_s;
  const double out = stage == pp - 1 ? wrap : own.forward_send_s;
  total += d(vpp - 1) * 2.0 * (in + out);
  return total;
}

const char* span_kind(ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward:
      return "forward";
    case ActionKind::kBackward:
    case ActionKind::kBackwardWeight:
      return "backward";
    case ActionKind::kWeight:
      return "weight";
    case ActionKind::kOverlapped:
      return "forward_backward";
    case ActionKind::kSend:
      return "send";
    case ActionKind::kRecv:
      return "recv";
  }
  return "";
}

const char* span_kind(EventKind kind) {
  switch (kind) {
    case EventKind::kForward:
      return "forward";
    case EventKind::kBackward:
      return "backward";
    case EventKind::kSend:
      return "send";
    case EventKind::kRecv:
      return "recv";
  }
  return "";
}

// Expert all-to-all of a pass, the part an overlapped partner's compute can hide.
double forward_ep_s(const ChunkTime& c) { return c.forward_comm.ep_s; }
double backward_ep_s(const ChunkTime& c) { return c.backward_comm.ep_s + c.recompute_comm.ep_s; }

PassCosts pass_costs(const ChunkTime& c) {
  return {c.forward_phase_s(), c.input_grad_pass_s(), c.weight_pass_s()};
}

// The middle value of each pass kind over the ranks' chunks: the times the ZB-V
// generator plans with (runtime.py avg_then_mid, the median over stages).
OrderOptions zero_bubble_v_options(const PipelineRunInput& in) {
  std::vector<double> f, b, w;
  for (const auto& rank : in.chunks) {
    for (const ChunkTime& c : rank) {
      const PassCosts p = pass_costs(c);
      f.push_back(p.forward_s);
      b.push_back(p.backward_s);
      w.push_back(p.weight_s);
    }
  }
  auto middle = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  OrderOptions o;
  o.forward_s = middle(f);
  o.backward_s = middle(b);
  o.weight_s = middle(w);
  std::vector<double> links = in.boundary_p2p_s;
  o.p2p_s = links.empty() ? 0.0 : middle(links);
  return o;
}

PipelineRun run_megatron(const PipelineRunInput& in) {
  const auto pp = static_cast<int64_t>(in.chunks.size());
  const auto vpp = static_cast<int64_t>(in.chunks.front().size());
  ScheduleInput schedule;
  schedule.num_micro_batches = in.num_micro_batches;
  schedule.interleaved_p2p_s = *std::max_element(in.boundary_p2p_s.begin(), in.boundary_p2p_s.end());
  schedule.record_timeline = in.record_timeline;
  schedule.merged_saving_s = in.merged_saving_s;
  schedule.overlap_p2p = in.overlap_p2p && pp > 1 && vpp > 1;
  for (int64_t s = 0; s < pp; ++s) {
    schedule.phases.emplace_back();
    for (const ChunkTime& c : in.chunks[static_cast<size_t>(s)]) {
      schedule.phases.back().push_back({c.forward_phase_s(), c.backward_phase_s()});
    }
    schedule.p2p.push_back(stage_p2p(s, pp, in.boundary_p2p_s));
  }
  const ScheduleResult result = simulate_pipeline(schedule);
  PipelineRun run;
  run.makespan_s = result.makespan_s;
  run.finish_s = result.stage_finish_s;
  run.hidden_ep_s.assign(static_cast<size_t>(pp), 0.0);
  if (!result.stage_saved_s.empty()) run.hidden_ep_s = result.stage_saved_s;
  for (int64_t s = 0; s < pp; ++s) {
    run.transfer_s.push_back(d(in.num_micro_batches) *
                             megatron_p2p_per_micro_batch_s(s, pp, vpp, in.boundary_p2p_s));
  }
  // Under overlap_p2p the rest ran beside compute.
  run.p2p_s = schedule.overlap_p2p ? result.stage_p2p_wait_s : run.transfer_s;
  for (const auto& events : result.timeline) {
    run.timeline.emplace_back();
    run.timeline.back().reserve(events.size() + 2);
    for (const TimelineEvent& e : events) {
      run.timeline.back().push_back({span_kind(e.kind), e.micro_batch, e.chunk, e.start_s, e.end_s});
    }
  }
  return run;
}

PipelineRun run_ordered(const PipelineRunInput& in) {
  const auto pp = static_cast<int64_t>(in.chunks.size());
  const auto chunks = static_cast<int64_t>(in.chunks.front().size());
  const int64_t vpp = in.schedule == PipelineSchedule::kDualPipe ? 1 : chunks;
  const OrderOptions options = in.schedule == PipelineSchedule::kZeroBubbleV
                                   ? zero_bubble_v_options(in)
                                   : OrderOptions{};
  const ScheduleOrders orders =
      make_schedule_orders(in.schedule, pp, vpp, in.num_micro_batches, options);
  ScheduleRunInput run_in;
  run_in.link_p2p_s = in.boundary_p2p_s;
  run_in.record_timeline = in.record_timeline;
  const bool overlaps = in.schedule == PipelineSchedule::kDualPipe ||
                        in.schedule == PipelineSchedule::kDualPipeV;
  for (const auto& rank : in.chunks) {
    run_in.passes.emplace_back();
    for (const ChunkTime& c : rank) run_in.passes.back().push_back(pass_costs(c));
    if (!overlaps) continue;
    run_in.overlapped_s.emplace_back();
    for (const ChunkTime& f : rank) {
      for (const ChunkTime& b : rank) {
        run_in.overlapped_s.back().push_back(overlapped_pair_s(
            f.forward_phase_s(), forward_ep_s(f), b.input_grad_pass_s() + b.weight_pass_s(),
            backward_ep_s(b)));
      }
    }
  }
  const ScheduleRun result = run_schedule(orders, run_in);
  PipelineRun run;
  run.makespan_s = result.makespan_s;
  run.finish_s = result.finish_s;
  run.hidden_ep_s.assign(static_cast<size_t>(pp), 0.0);
  run.p2p_s.assign(static_cast<size_t>(pp), 0.0);
  for (int64_t r = 0; r < pp; ++r) {
    // A pair's passes (what overlapped_pair_s was given) less the pair: the hidden EP.
    const auto& rank = in.chunks[static_cast<size_t>(r)];
    for (const Action& a : orders.actions[static_cast<size_t>(r)]) {
      if (a.kind != ActionKind::kOverlapped) continue;
      const ChunkTime& f = rank[static_cast<size_t>(a.chunk)];
      const ChunkTime& b = rank[static_cast<size_t>(a.backward_chunk)];
      const double pair = run_in.overlapped_s[static_cast<size_t>(r)]
                                             [static_cast<size_t>(a.chunk * chunks + a.backward_chunk)];
      // (never below zero: without expert communication the two sides differ by rounding only)
      run.hidden_ep_s[static_cast<size_t>(r)] +=
          std::max(0.0, f.forward_phase_s() + b.input_grad_pass_s() + b.weight_pass_s() - pair);
    }
  }
  // Every hop of a micro-batch's route that crosses a link is sent by one rank
  // and received by the next, forward (activation) and backward (gradient).
  const int32_t stages = orders.num_virtual_stages;
  for (int32_t mb = 0; mb < orders.num_micro_batches; ++mb) {
    const int32_t route =
        orders.route_of_micro_batch.empty() ? 0 : orders.route_of_micro_batch[static_cast<size_t>(mb)];
    for (int32_t v = 0; v + 1 < stages; ++v) {
      const StageSlot& from = orders.route_stages[static_cast<size_t>(route * stages + v)];
      const StageSlot& to = orders.route_stages[static_cast<size_t>(route * stages + v + 1)];
      if (from.link_to_next < 0) continue;
      const double link = in.boundary_p2p_s[static_cast<size_t>(from.link_to_next)];
      run.p2p_s[static_cast<size_t>(from.rank)] += 2.0 * link;
      run.p2p_s[static_cast<size_t>(to.rank)] += 2.0 * link;
    }
  }
  run.transfer_s = run.p2p_s;
  for (const auto& events : result.timeline) {
    run.timeline.emplace_back();
    run.timeline.back().reserve(events.size() + 2);
    for (const RunEvent& e : events) {
      run.timeline.back().push_back({span_kind(e.kind), e.micro_batch, e.chunk, e.start_s, e.end_s});
    }
  }
  return run;
}

}  // namespace

int64_t micro_batches_per_chunk(PipelineSchedule schedule, int64_t num_micro_batches) {
  return schedule == PipelineSchedule::kDualPipe ? num_micro_batches / 2 : num_micro_batches;
}

PipelineRun run_pipeline(const PipelineRunInput& input) {
  TRAINSIM_CHECK(!input.chunks.empty() && !input.chunks.front().empty() &&
                     input.boundary_p2p_s.size() == input.chunks.size(),
                 "pipeline run: chunks must be a [rank][chunk] table with one link per rank");
  if (input.schedule == PipelineSchedule::kOneFOneB) return run_megatron(input);
  return run_ordered(input);
}

PipelineRun pipeline_run_lower_bound(const PipelineRunInput& in) {
  PipelineRun run;
  const size_t pp = in.chunks.size();
  run.hidden_ep_s.assign(pp, 0.0);
  run.p2p_s.assign(pp, 0.0);
  run.transfer_s.assign(pp, 0.0);
  if (in.schedule == PipelineSchedule::kOneFOneB) {
    ScheduleInput schedule;
    schedule.num_micro_batches = in.num_micro_batches;
    for (size_t r = 0; r < in.chunks.size(); ++r) {
      const auto& rank = in.chunks[r];
      schedule.phases.emplace_back();
      for (size_t c = 0; c < rank.size(); ++c) {
        // EP overlap: a forward merges with at most one backward and saves at most the
        // largest saving of its chunk, so the bound stays a bound.
        double most_saved_s = 0.0;
        for (size_t b = 0; !in.merged_saving_s.empty() && b < rank.size(); ++b) {
          most_saved_s = std::max(most_saved_s, in.merged_saving_s[r][c * rank.size() + b]);
        }
        schedule.phases.back().push_back({rank[c].forward_phase_s() - most_saved_s, rank[c].backward_phase_s()});
      }
    }
    const ScheduleResult bound = pipeline_lower_bound(schedule);
    run.makespan_s = bound.makespan_s;
    run.finish_s = bound.stage_finish_s;
    return run;
  }
  const bool dualpipe = in.schedule == PipelineSchedule::kDualPipe ||
                        in.schedule == PipelineSchedule::kDualPipeV;
  const double n = d(micro_batches_per_chunk(in.schedule, in.num_micro_batches));
  double upstream_s = 0.0;
  for (const auto& rank : in.chunks) {
    double busy_s = 0.0;
    for (const ChunkTime& c : rank) {
      busy_s += c.forward_phase_s() + c.backward_phase_s();
      if (dualpipe) busy_s -= forward_ep_s(c) + backward_ep_s(c);
    }
    const double finish_s = (in.schedule == PipelineSchedule::kDualPipe ? 0.0 : upstream_s) + n * busy_s;
    run.finish_s.push_back(finish_s);
    run.makespan_s = std::max(run.makespan_s, finish_s);
    const ChunkTime& first = rank.front();
    upstream_s += first.forward_phase_s() - (dualpipe ? forward_ep_s(first) : 0.0);
  }
  return run;
}

ScheduleInFlight schedule_in_flight(const Config& config,
                                    const std::vector<std::vector<double>>& stored_bytes,
                                    const std::vector<std::vector<PassOverBytes>>& pass_bytes) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  ScheduleInFlight out;
  // Flash attention stores no attention scores: the 5as term of the ZB memory model drops.
  out.weight_kept_fraction =
      weight_kept_fraction(config.model.hidden_size,
                           t.kernels.flash_attention ? 0 : config.model.num_attention_heads, t.seq_len);
  OrderOptions options;
  options.weight_kept_fraction = out.weight_kept_fraction;
  const ScheduleOrders orders =
      make_schedule_orders(p.schedule, p.pp, p.vpp, t.num_micro_batches, options);
  const std::vector<ActivationPeak> peaks =
      activation_peaks(orders, out.weight_kept_fraction, stored_bytes, pass_bytes);
  for (size_t r = 0; r < peaks.size(); ++r) {
    const ActivationPeak& peak = peaks[r];
    out.ranks.push_back({peak.in_flight_per_chunk, peak.waiting_per_chunk, peak.peak_alive,
                         peak.peak_waiting, peak.running_chunk, peak.running_backward,
                         rank_pass_steps(orders.actions[r])});
  }
  return out;
}

}  // namespace trainsim
