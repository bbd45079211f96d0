#include "report/trace_layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "memory/stage_memory.h"
#include "model/model_plan.h"
#include "time/chunk_time.h"
#include "time/schedule_orders.h"
#include "time/schedule_runner.h"
#include "trainsim/issue.h"

namespace trainsim::report {
namespace {

// The parts a pass's duration is the sum of (ChunkTime's phases).
struct PassParts {
  double compute_s = 0.0;
  CommTimes comm;
  double host_s = 0.0;
};

CommTimes minus(CommTimes a, const CommTimes& b) { return {a.tp_s - b.tp_s, a.cp_s - b.cp_s, a.ep_s - b.ep_s}; }

PassParts plus(const PassParts& a, const PassParts& b) {
  PassParts sum{a.compute_s + b.compute_s, a.comm, a.host_s + b.host_s};
  sum.comm += b.comm;
  return sum;
}

// F: ChunkTime::forward_phase_s().
PassParts forward_parts(const ChunkTime& c) { return {c.forward_s, c.forward_comm, c.forward_host_s}; }

// W: ChunkTime::weight_pass_s().
PassParts weight_parts(const ChunkTime& c) { return {c.weight_s, c.weight_comm, c.weight_host_s}; }

// B of a W-split schedule: ChunkTime::input_grad_pass_s().
PassParts input_grad_parts(const ChunkTime& c) {
  CommTimes comm = c.backward_comm;
  comm += c.recompute_comm;
  return {c.backward_s + c.recompute_s - c.weight_s, minus(comm, c.weight_comm), c.input_grad_host_s};
}

// The whole backward: Megatron's 1F1B prices it as backward_phase_s(); the
// order-driven schedules run a BW as B then W (time/pipeline_run.cpp pass_costs).
PassParts whole_backward_parts(const ChunkTime& c, bool megatron) {
  if (!megatron) return plus(input_grad_parts(c), weight_parts(c));
  CommTimes comm = c.backward_comm;
  comm += c.recompute_comm;
  return {c.backward_s + c.recompute_s, comm, c.backward_host_s};
}

std::string pass_name(const char* kind, int64_t micro_batch, int64_t chunk, bool chunked) {
  std::string name = std::string(kind) + " mb " + std::to_string(micro_batch);
  if (chunked) name += " chunk " + std::to_string(chunk);
  return name;
}

std::string stage_name(int64_t stage, const std::vector<ChunkLayers>& chunks) {
  std::string ranges;
  for (const ChunkLayers& c : chunks) {
    if (c.num_layers <= 0) continue;
    ranges += (ranges.empty() ? "" : ", ") + std::to_string(c.first_layer) + "-" +
              std::to_string(c.first_layer + c.num_layers - 1);
  }
  return "stage " + std::to_string(stage) + (ranges.empty() ? " (no decoder layers)" : " (layers " + ranges + ")");
}

using PassKey = std::tuple<int32_t, int64_t, int64_t>;  // stage, micro-batch, chunk

class LayoutBuilder {
 public:
  LayoutBuilder(const Config& config, const Estimate& estimate)
      : config_(config), estimate_(estimate), plan_(build_model_plan(config)) {
    const std::vector<ChunkTime> per_block = block_times(config, plan_, block_op_times(config, plan_));
    for (const auto& stage : plan_.stages) {
      chunk_times_.emplace_back();
      for (const ChunkPlan& chunk : stage) {
        chunk_times_.back().push_back(chunk_time(per_block, chunk, config.system.efficiency.host));
      }
    }
    stored_bytes_ = chunk_stored_bytes(plan_);
    const ParallelSpec& p = config.training.parallel;
    const auto chunks = static_cast<int64_t>(plan_.stages.front().size());
    dualpipe_ = p.schedule == PipelineSchedule::kDualPipe || p.schedule == PipelineSchedule::kDualPipeV;
    // The placement run_pipeline() simulated (time/pipeline_run.cpp run_ordered).
    orders_ = make_schedule_orders(p.schedule, p.pp, p.schedule == PipelineSchedule::kDualPipe ? 1 : chunks,
                                   config.training.num_micro_batches);
    kept_fraction_ = weight_kept_fraction(config.model.hidden_size,
                                          config.training.kernels.flash_attention ? 0 : config.model.num_attention_heads,
                                          config.training.seq_len);
    chunked_ = chunks > 1;
  }

  TraceLayout build() {
    const auto stages = static_cast<int32_t>(estimate_.timeline.stages.size());
    out_.threads.resize(static_cast<size_t>(stages));
    for (int32_t s = 0; s < stages; ++s) {
      out_.stage_names.push_back(stage_name(s, plan_.layout[static_cast<size_t>(s)]));
      lay_stage(s);
    }
    add_flows();
    for (auto& threads : out_.threads) std::sort(threads.begin(), threads.end());
    return std::move(out_);
  }

 private:
  void slice(int32_t stage, int32_t tid, const char* cat, const std::string& name, double start_s,
             double duration_s, int64_t mb, int64_t chunk) {
    out_.slices.push_back({stage, tid, name, cat, start_s, duration_s, mb, chunk});
    auto& threads = out_.threads[static_cast<size_t>(stage)];
    if (std::none_of(threads.begin(), threads.end(), [&](const auto& t) { return t.first == tid; })) {
      static const std::map<int32_t, std::string> kNames = {
          {kComputeTid, "compute"},     {kTpTid, "TP collectives"}, {kCpTid, "CP collectives"},
          {kEpTid, "EP all-to-all"},    {kHostTid, "host waits"},   {kDpTid, "DP collectives"}};
      const auto known = kNames.find(tid);
      threads.emplace_back(tid, known != kNames.end()
                                    ? known->second
                                    : "PP send/recv" + (tid == kPipelineP2pTid
                                                            ? std::string()
                                                            : " " + std::to_string(tid - kPipelineP2pTid + 1)));
    }
  }

  // Lays a pass's parts end to end from start_s (EP beside the rest when overlapped);
  // returns the middle of its compute slice (where flows bind).
  double lay_pass(int32_t stage, double start_s, const PassParts& parts, const std::string& name, int64_t mb,
                  int64_t chunk, bool overlapped) {
    double t = start_s;
    slice(stage, kComputeTid, "compute", name, t, parts.compute_s, mb, chunk);
    const double middle_s = t + 0.5 * parts.compute_s;
    t += parts.compute_s;
    const auto part = [&](int32_t tid, const char* cat, const char* prefix, double duration_s, bool advance) {
      if (duration_s <= 0.0) return;
      slice(stage, tid, cat, std::string(prefix) + name, advance ? t : start_s, duration_s, mb, chunk);
      if (advance) t += duration_s;
    };
    part(kTpTid, "tp_comm", "TP ", parts.comm.tp_s, true);
    part(kCpTid, "cp_comm", "CP ", parts.comm.cp_s, true);
    part(kEpTid, "ep_comm", "EP ", parts.comm.ep_s, !overlapped);
    part(kHostTid, "host_wait", "host ", parts.host_s, true);
    return middle_s;
  }

  void count(int32_t stage, double at_s, double delta_bytes) {
    live_bytes_ = std::max(0.0, live_bytes_ + delta_bytes);
    out_.counters.push_back({stage, at_s, static_bytes_, live_bytes_});
  }

  double stored(int32_t stage, int64_t chunk) const {
    return stored_bytes_[static_cast<size_t>(stage)][static_cast<size_t>(chunk)];
  }

  // A transfer on the first p2p lane free at its start.
  void transfer(int32_t stage, const TimelineSpan& span, std::vector<double>& lanes_end_s) {
    size_t lane = 0;
    while (lane < lanes_end_s.size() && lanes_end_s[lane] > span.start_s) ++lane;
    if (lane == lanes_end_s.size()) lanes_end_s.push_back(0.0);
    lanes_end_s[lane] = span.end_s;
    slice(stage, kPipelineP2pTid + static_cast<int32_t>(lane), "pp_p2p",
          pass_name(span.kind == "send" ? "send" : "recv", span.micro_batch, span.chunk, chunked_), span.start_s,
          span.end_s - span.start_s, span.micro_batch, span.chunk);
  }

  void lay_stage(int32_t s) {
    const StageMemory& memory = estimate_.memory.stages[static_cast<size_t>(s)];
    static_bytes_ = memory.parameters_bytes + memory.gradients_bytes + memory.optimizer_bytes + memory.buffers_bytes;
    live_bytes_ = 0.0;
    // In time order (Megatron's simulator appends a transfer to both ranks when it ends).
    std::vector<TimelineSpan> spans = estimate_.timeline.stages[static_cast<size_t>(s)];
    std::stable_sort(spans.begin(), spans.end(),
                     [](const TimelineSpan& x, const TimelineSpan& y) { return x.start_s < y.start_s; });
    const auto& chunk_times = chunk_times_[static_cast<size_t>(s)];
    const bool megatron = config_.training.parallel.schedule == PipelineSchedule::kOneFOneB;
    std::set<std::pair<int64_t, int64_t>> weight_split;  // (mb, chunk) whose W runs apart
    // --defer-embedding-wgrad-compute: the drain, a W of no micro-batch, holds the output
    // layer's weight gradients that each backward pass of its chunk left out, an equal
    // share per pass (time/step_time.cpp).
    std::map<int64_t, double> deferred_per_pass_s;  // chunk -> time each backward lost
    const auto passes = static_cast<double>(config_.training.num_micro_batches);
    for (const TimelineSpan& span : spans) {
      if (span.kind != "weight") continue;
      if (span.micro_batch < 0) {
        deferred_per_pass_s[span.chunk] = (span.end_s - span.start_s) / passes;
      } else {
        weight_split.insert({span.micro_batch, span.chunk});
      }
    }
    std::vector<const Action*> pairs;  // the F&B pairs of the orders, in order
    for (const Action& a : orders_.actions[static_cast<size_t>(s)]) {
      if (a.kind == ActionKind::kOverlapped) pairs.push_back(&a);
    }
    size_t next_pair = 0;
    std::vector<double> lanes_end_s;
    double pipeline_end_s = 0.0;
    count(s, 0.0, 0.0);
    for (const TimelineSpan& span : spans) {
      const ChunkTime* c = span.chunk >= 0 ? &chunk_times[static_cast<size_t>(span.chunk)] : nullptr;
      const PassKey key{s, span.micro_batch, span.chunk};
      if (span.kind == "forward") {
        count(s, span.start_s, stored(s, span.chunk));
        forward_at_[key] = lay_pass(s, span.start_s, forward_parts(*c), pass_name("F", span.micro_batch, span.chunk, chunked_),
                                    span.micro_batch, span.chunk, false);
      } else if (span.kind == "backward") {
        const bool split = weight_split.count({span.micro_batch, span.chunk}) != 0;
        PassParts parts = split ? input_grad_parts(*c) : whole_backward_parts(*c, megatron);
        const auto deferred = deferred_per_pass_s.find(span.chunk);
        if (deferred != deferred_per_pass_s.end()) parts.compute_s -= deferred->second;
        backward_at_[key] = lay_pass(s, span.start_s, parts,
                                     pass_name(split || megatron ? "B" : "BW", span.micro_batch, span.chunk, chunked_),
                                     span.micro_batch, span.chunk, false);
        count(s, span.end_s, -stored(s, span.chunk) * (split ? 1.0 - kept_fraction_ : 1.0));
      } else if (span.kind == "weight" && span.micro_batch < 0) {
        slice(s, kComputeTid, "compute", chunked_ ? "W deferred output layer chunk " + std::to_string(span.chunk)
                                                  : std::string("W deferred output layer"),
              span.start_s, span.end_s - span.start_s, -1, span.chunk);
      } else if (span.kind == "weight") {
        lay_pass(s, span.start_s, weight_parts(*c), pass_name("W", span.micro_batch, span.chunk, chunked_),
                 span.micro_batch, span.chunk, false);
        count(s, span.end_s, -stored(s, span.chunk) * kept_fraction_);
      } else if (span.kind == "forward_backward") {
        TRAINSIM_CHECK(next_pair < pairs.size() && pairs[next_pair]->micro_batch == span.micro_batch &&
                           pairs[next_pair]->chunk == span.chunk,
                       "trace: the timeline's F&B pairs differ from the schedule's orders");
        const Action& a = *pairs[next_pair++];
        const ChunkTime& b = chunk_times[static_cast<size_t>(a.backward_chunk)];
        count(s, span.start_s, stored(s, span.chunk));
        const double middle_s = lay_pass(
            s, span.start_s, plus(forward_parts(*c), whole_backward_parts(b, false)),
            pass_name("F", span.micro_batch, span.chunk, chunked_) + " & " +
                pass_name("BW", a.backward_micro_batch, a.backward_chunk, chunked_),
            span.micro_batch, span.chunk, dualpipe_);
        forward_at_[key] = middle_s;
        backward_at_[{s, a.backward_micro_batch, a.backward_chunk}] = middle_s;
        count(s, span.end_s, -stored(s, a.backward_chunk));
      } else if (span.kind == "send" || span.kind == "recv") {
        transfer(s, span, lanes_end_s);
      } else if (span.kind == "dp_comm") {
        if (span.end_s > span.start_s) {
          slice(s, kDpTid, "dp_comm", "DP grad reduce-scatter + param all-gather (exposed)", span.start_s,
                span.end_s - span.start_s, -1, -1);
        }
        const double straggler_s = estimate_.time.stages[static_cast<size_t>(s)].breakdown.straggler_s;
        if (straggler_s > 0.0) {
          slice(s, kComputeTid, "straggler", "straggler slowdown", std::max(pipeline_end_s, span.start_s - straggler_s),
                span.start_s - std::max(pipeline_end_s, span.start_s - straggler_s), -1, -1);
        }
      } else if (span.kind == "optimizer") {
        if (span.end_s > span.start_s) {
          slice(s, kComputeTid, "optimizer", "optimizer step", span.start_s, span.end_s - span.start_s, -1, -1);
        }
        count(s, span.end_s, 0.0);
      }
      if (span.kind != "dp_comm" && span.kind != "optimizer") pipeline_end_s = std::max(pipeline_end_s, span.end_s);
    }
  }

  // Activations go to the next virtual stage of the micro-batch's route, their
  // gradients to the previous one, when that hop crosses ranks.
  void add_flows() {
    const int32_t stages = orders_.num_virtual_stages;
    const auto slot_of = [&](int32_t route, int32_t rank, int64_t chunk) {
      for (int32_t v = 0; v < stages; ++v) {
        const StageSlot& slot = orders_.route_stages[static_cast<size_t>(route * stages + v)];
        if (slot.rank == rank && slot.chunk == chunk) return v;
      }
      return -1;
    };
    const auto route_of = [&](int64_t mb) {
      return orders_.route_of_micro_batch.empty() ? 0 : orders_.route_of_micro_batch[static_cast<size_t>(mb)];
    };
    const auto link = [&](const std::map<PassKey, double>& passes, const char* cat, int step) {
      for (const auto& [key, from_s] : passes) {
        const auto [rank, mb, chunk] = key;
        const int32_t route = route_of(mb);
        const int32_t v = slot_of(route, rank, chunk);
        const int32_t hop = step > 0 ? v : v - 1;  // the hop v -> v + 1 or v - 1 -> v
        if (v < 0 || hop < 0 || hop + 1 >= stages) continue;
        const StageSlot& crossing = orders_.route_stages[static_cast<size_t>(route * stages + hop)];
        if (crossing.link_to_next < 0) continue;
        const StageSlot& to = orders_.route_stages[static_cast<size_t>(route * stages + v + step)];
        const auto found = passes.find({to.rank, mb, to.chunk});
        if (found == passes.end()) continue;
        out_.flows.push_back({static_cast<int64_t>(out_.flows.size()) + 1, cat, mb, rank, from_s, to.rank,
                              found->second});
      }
    };
    link(forward_at_, "activation", 1);
    link(backward_at_, "gradient", -1);
  }

  const Config& config_;
  const Estimate& estimate_;
  ModelPlan plan_;
  std::vector<std::vector<ChunkTime>> chunk_times_;
  std::vector<std::vector<double>> stored_bytes_;
  ScheduleOrders orders_;
  double kept_fraction_ = 0.0;
  bool dualpipe_ = false;
  bool chunked_ = false;
  double static_bytes_ = 0.0;
  double live_bytes_ = 0.0;
  std::map<PassKey, double> forward_at_;   // middle of each forward's compute slice
  std::map<PassKey, double> backward_at_;  // and of each backward's
  TraceLayout out_;
};

}  // namespace

TraceLayout trace_layout(const Config& config, const Estimate& estimate) {
  TRAINSIM_CHECK(estimate.timeline.included && !estimate.timeline.stages.empty(),
                 "trace: the estimate has no timeline");
  return LayoutBuilder(config, estimate).build();
}

}  // namespace trainsim::report
