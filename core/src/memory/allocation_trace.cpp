#include "memory/allocation_trace.h"

#include <algorithm>
#include <cmath>

namespace trainsim {
namespace {

constexpr int64_t kTransientId = int64_t{1} << 61;
constexpr int64_t kStaticId = int64_t{1} << 62;

struct ProgEvent {
  int32_t slot = -1;  ///< tensor slot within the block (-1: the transient)
  bool free = false;
  bool relabel = false;  ///< first event of an (op, phase): the sink gets a label
  int64_t bytes = 0;
  int32_t op = -1;
  WalkPhase phase = WalkPhase::kForward;
};

// One block's events for each kind of pass, ids relative to the block.
struct BlockProgram {
  std::vector<ProgEvent> forward;
  std::vector<ProgEvent> backward;        ///< BW: everything freed
  std::vector<ProgEvent> split_backward;  ///< B: the GEMMs' saved inputs stay
  std::vector<ProgEvent> weight;          ///< W: frees what B kept
  int32_t slots = 0;
};

int64_t to_bytes(double bytes) { return bytes > 0.0 ? std::llround(bytes) : 0; }

// Ops whose saved input the weight-gradient GEMM reads (kept until W).
bool weight_gemm(const Op& op) {
  return op.kind == OpKind::kLinear || op.kind == OpKind::kGroupedLinear ||
         op.kind == OpKind::kRouter;
}

class ProgramBuilder {
 public:
  explicit ProgramBuilder(BlockProgram& p) : p_(p) {}

  void forward(int32_t slot, int64_t saved, int64_t working, int32_t op, WalkPhase phase) {
    if (saved > 0) push(p_.forward, {slot, false, false, saved, op, phase});
    transient(p_.forward, working - saved, op, phase);
  }
  // Backward (and recompute) events go to both backward programs.
  void both(int32_t slot, bool free, int64_t bytes, int32_t op, WalkPhase phase) {
    push(p_.backward, {slot, free, false, bytes, op, phase});
    push(p_.split_backward, {slot, free, false, bytes, op, phase});
  }
  void both_transient(int64_t bytes, int32_t op, WalkPhase phase) {
    transient(p_.backward, bytes, op, phase);
    transient(p_.split_backward, bytes, op, phase);
  }
  // A saved tensor split in two (split-backward orders): the share its W reads
  // (slot `kept`) and the rest (slot `rest`), allocated together.
  void forward_split(int32_t kept, int64_t kept_bytes, int32_t rest, int64_t rest_bytes,
                     int64_t working, int32_t op, WalkPhase phase) {
    if (kept_bytes > 0) push(p_.forward, {kept, false, false, kept_bytes, op, phase});
    if (rest_bytes > 0) push(p_.forward, {rest, false, false, rest_bytes, op, phase});
    transient(p_.forward, working - kept_bytes - rest_bytes, op, phase);
  }
  // BW frees both parts, B the rest, W the kept share.
  void release_split(int32_t kept, int64_t kept_bytes, int32_t rest, int64_t rest_bytes, int32_t op,
                     WalkPhase phase) {
    if (kept_bytes > 0) push(p_.backward, {kept, true, false, 0, op, phase});
    if (rest_bytes > 0) {
      push(p_.backward, {rest, true, false, 0, op, phase});
      push(p_.split_backward, {rest, true, false, 0, op, phase});
    }
    if (kept_bytes > 0) push(p_.weight, {kept, true, false, 0, op, phase});
  }
  void release(int32_t slot, int32_t op, WalkPhase phase, bool keep_for_weight) {
    push(p_.backward, {slot, true, false, 0, op, phase});
    if (keep_for_weight) {
      push(p_.weight, {slot, true, false, 0, op, phase});
    } else {
      push(p_.split_backward, {slot, true, false, 0, op, phase});
    }
  }

 private:
  static void push(std::vector<ProgEvent>& events, ProgEvent e) {
    e.relabel = events.empty() || events.back().op != e.op || events.back().phase != e.phase;
    events.push_back(e);
  }
  static void transient(std::vector<ProgEvent>& events, int64_t bytes, int32_t op, WalkPhase phase) {
    if (bytes <= 0) return;
    push(events, {-1, false, false, bytes, op, phase});
    push(events, {-1, true, false, bytes, op, phase});
  }
  BlockProgram& p_;
};

// The walk of model/activation_walk.cpp, event by event. kept_fraction < 0:
// one tensor per saved activation (slot i of op i; Megatron's BW orders).
// kept_fraction >= 0 (orders with B and W passes): op i's saved tensor is two,
// its share kept_fraction that the W reads (slot 2i) and the rest (2i + 1), so
// a B frees (1 - kept_fraction) of the stored bytes and its W the rest, as
// stage_memory counts the micro-batches waiting for their W
// (model/schedule_in_flight.h weight_kept_fraction: Qi et al., "Zero Bubble
// Pipeline Parallelism", ICLR 2024, arXiv:2401.10241 section 3; the runtime's
// f_mem / b_mem / w_mem, sail-sg/zero-bubble-pipeline-parallelism
// megatron/core/pipeline_parallel/zb_schedules.py, whose WeightGradStore keeps
// the GEMMs' inputs and output gradients for the deferred weight GEMMs).
// Tensors a recompute makes inside the backward are freed by the B.
BlockProgram op_program(const Block& block, double kept_fraction) {
  BlockProgram p;
  const OpList& ops = block.ops;
  const bool split = kept_fraction >= 0.0;
  const std::vector<char> first = recompute_segment_starts(ops);
  std::vector<int64_t> stored(ops.size(), 0);
  std::vector<int64_t> kept(ops.size(), 0);  // split: op i's share kept for the W
  ProgramBuilder b(p);
  const auto whole_slot = [&](size_t i) { return static_cast<int32_t>(split ? 2 * i + 1 : i); };
  // The release of a tensor the forward saved.
  const auto release_saved = [&](size_t i, WalkPhase phase) {
    const auto index = static_cast<int32_t>(i);
    if (split) {
      b.release_split(static_cast<int32_t>(2 * i), kept[i], whole_slot(i), stored[i] - kept[i], index,
                      phase);
    } else {
      b.release(index, index, phase, weight_gemm(ops[i]));
    }
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (!op.recompute) {
      stored[i] = to_bytes(op.cache_bytes);
    } else if (first[i]) {
      stored[i] = op.offload_input ? 0 : to_bytes(op.input_bytes);
    }
    const auto index = static_cast<int32_t>(i);
    if (split) {
      kept[i] = std::min(stored[i], to_bytes(kept_fraction * static_cast<double>(stored[i])));
      b.forward_split(static_cast<int32_t>(2 * i), kept[i], whole_slot(i), stored[i] - kept[i],
                      to_bytes(op.fwd_peak_bytes), index, WalkPhase::kForward);
    } else {
      b.forward(index, stored[i], to_bytes(op.fwd_peak_bytes), index, WalkPhase::kForward);
    }
  }
  for (size_t end = ops.size(); end > 0;) {
    const size_t i = end - 1;
    const auto index = static_cast<int32_t>(i);
    if (!ops[i].recompute) {
      b.both_transient(to_bytes(ops[i].bwd_peak_bytes), index, WalkPhase::kBackward);
      if (stored[i] > 0) release_saved(i, WalkPhase::kBackward);
      end = i;
      continue;
    }
    size_t start = i;
    while (!first[start]) --start;
    for (size_t j = start; j <= i; ++j) {  // recompute forward of the segment
      const auto jj = static_cast<int32_t>(j);
      int64_t saved = 0;
      if (j != start) {
        stored[j] = to_bytes(ops[j].cache_bytes);
        saved = stored[j];
        if (saved > 0) b.both(whole_slot(j), false, saved, jj, WalkPhase::kRecomputeForward);
      }
      b.both_transient(to_bytes(ops[j].fwd_peak_bytes) - saved, jj, WalkPhase::kRecomputeForward);
    }
    for (size_t j = i + 1; j-- > start;) {  // then its backward
      const auto jj = static_cast<int32_t>(j);
      b.both_transient(to_bytes(ops[j].bwd_peak_bytes), jj, WalkPhase::kRecomputeBackward);
      if (stored[j] <= 0) continue;
      if (j == start || !split) {
        release_saved(j, WalkPhase::kRecomputeBackward);
      } else {
        b.release(whole_slot(j), jj, WalkPhase::kRecomputeBackward, false);
      }
    }
    end = start;
  }
  p.slots = static_cast<int32_t>(ops.size()) * (split ? 2 : 1);
  return p;
}

// A block as one saved tensor (two with a split backward) and one working set.
// kept_fraction >= 0: the second tensor is that share of the saved bytes (see
// op_program()); < 0: the GEMMs' saved inputs.
BlockProgram layer_program(const Block& block, double kept_fraction) {
  BlockProgram p;
  ProgramBuilder b(p);
  const int64_t saved = to_bytes(block.walk.stored_bytes);
  double kept_for_weight = kept_fraction * static_cast<double>(saved);
  if (kept_fraction < 0.0) {
    kept_for_weight = 0.0;
    for (const Op& op : block.ops) {
      if (!op.recompute && weight_gemm(op)) kept_for_weight += op.cache_bytes;
    }
  }
  const int64_t weight_part = std::min(saved, to_bytes(kept_for_weight));
  b.forward(0, saved - weight_part, saved - weight_part, -1, WalkPhase::kForward);
  b.forward(1, weight_part, to_bytes(block.walk.forward_peak.bytes) - (saved - weight_part), -1,
            WalkPhase::kForward);
  b.both_transient(to_bytes(block.walk.backward_peak.bytes) - saved, -1, WalkPhase::kBackward);
  if (weight_part > 0) b.release(1, -1, WalkPhase::kBackward, true);
  if (saved - weight_part > 0) b.release(0, -1, WalkPhase::kBackward, false);
  p.slots = 2;
  return p;
}

const std::vector<ProgEvent>& events_of(const BlockProgram& p, PassKind kind) {
  switch (kind) {
    case PassKind::kForward: return p.forward;
    case PassKind::kBackward: return p.split_backward;
    case PassKind::kWeight: return p.weight;
    case PassKind::kBackwardWeight: break;
  }
  return p.backward;
}

class Emitter {
 public:
  Emitter(const StageTraceSpec& spec, TraceSink* sink) : spec_(spec), sink_(sink) {
    const ModelPlan& plan = *spec.plan;
    programs_.resize(plan.blocks.size());
    std::vector<char> used(plan.blocks.size(), 0);
    for (const ChunkPlan& chunk : plan.stages[spec.stage]) {
      for (const BlockRun& run : chunk.runs) used[static_cast<size_t>(run.block)] = 1;
    }
    // Orders with B passes keep each saved tensor's weight_kept_fraction until its W.
    const bool split = std::any_of(spec.order.begin(), spec.order.end(),
                                   [](const PassStep& s) { return s.kind == PassKind::kBackward; });
    const double kept = split ? std::clamp(spec.weight_kept_fraction, 0.0, 1.0) : -1.0;
    for (size_t i = 0; i < plan.blocks.size(); ++i) {
      if (!used[i]) continue;
      programs_[i] = spec.granularity == TraceGranularity::kOp ? op_program(*plan.blocks[i], kept)
                                                               : layer_program(*plan.blocks[i], kept);
    }
  }

  int64_t count() const {
    int64_t events = 0;
    for (const auto* list : {&spec_.statics->setup, &spec_.statics->first_forward,
                             &spec_.statics->first_backward, &spec_.statics->optimizer_state}) {
      events += static_cast<int64_t>(list->size());
    }
    const auto& chunks = spec_.plan->stages[spec_.stage];
    for (const PassStep& step : spec_.order) {
      for (const BlockRun& run : chunks[static_cast<size_t>(step.chunk)].runs) {
        events += run.repeat * static_cast<int64_t>(
                                   events_of(programs_[static_cast<size_t>(run.block)], step.kind).size());
      }
    }
    return 2 * events;  // two steps (the statics are counted twice: an upper bound)
  }

  void run() {
    statics(spec_.statics->setup, TraceSection::kSetup);
    bool forward_done = false, backward_done = false;
    for (const PassStep& step : spec_.order) {
      if (!forward_done && step.kind == PassKind::kForward) {
        statics(spec_.statics->first_forward, TraceSection::kStep1);
        forward_done = true;
      }
      if (!backward_done && step.kind != PassKind::kForward) {
        statics(spec_.statics->first_backward, TraceSection::kStep1);
        backward_done = true;
      }
      pass(step, TraceSection::kStep1);
    }
    statics(spec_.statics->optimizer_state, TraceSection::kOptimizerStep);
    for (const PassStep& step : spec_.order) pass(step, TraceSection::kStep2);
  }

 private:
  void statics(const std::vector<TraceTensor>& tensors, TraceSection section) {
    for (const TraceTensor& t : tensors) {
      TraceLabel label;
      label.section = section;
      label.buffer = t.name;
      sink_->label(label);
      sink_->allocate(kStaticId + next_static_++, to_bytes(t.bytes));
    }
  }

  void pass(const PassStep& step, TraceSection section) {
    const ChunkPlan& chunk = spec_.plan->stages[spec_.stage][static_cast<size_t>(step.chunk)];
    const auto chunks = static_cast<int64_t>(spec_.plan->stages[spec_.stage].size());
    const int64_t base = (static_cast<int64_t>(step.micro_batch) * chunks + step.chunk) << 32;
    TraceLabel label;
    label.section = section;
    label.pass = step.kind;
    label.chunk = step.chunk;
    label.micro_batch = step.micro_batch;
    const bool reverse = step.kind != PassKind::kForward;
    const auto runs = static_cast<int64_t>(chunk.runs.size());
    int64_t offset = 0;
    if (reverse) {
      for (const BlockRun& run : chunk.runs) {
        offset += run.repeat * programs_[static_cast<size_t>(run.block)].slots;
      }
    }
    for (int64_t r = 0; r < runs; ++r) {
      const BlockRun& run = chunk.runs[static_cast<size_t>(reverse ? runs - 1 - r : r)];
      const BlockProgram& program = programs_[static_cast<size_t>(run.block)];
      const std::vector<ProgEvent>& events = events_of(program, step.kind);
      const int64_t layers = spec_.plan->blocks[static_cast<size_t>(run.block)]->num_layers;
      label.block = run.block;
      for (int64_t k = 0; k < run.repeat; ++k) {
        const int64_t rep = reverse ? run.repeat - 1 - k : k;
        if (reverse) offset -= program.slots;
        label.layer = run.first_layer < 0 ? -1 : run.first_layer + rep * layers;
        for (const ProgEvent& e : events) {
          if (e.relabel) {
            label.op = e.op;
            label.phase = e.phase;
            sink_->label(label);
          }
          const int64_t id = e.slot < 0 ? kTransientId : base + offset + e.slot;
          if (e.free) {
            sink_->release(id);
          } else {
            sink_->allocate(id, e.bytes);
          }
        }
        if (!reverse) offset += program.slots;
      }
    }
  }

  const StageTraceSpec& spec_;
  TraceSink* sink_;
  std::vector<BlockProgram> programs_;
  int64_t next_static_ = 0;
};

}  // namespace

int64_t stage_trace_events(const StageTraceSpec& spec) { return Emitter(spec, nullptr).count(); }

void emit_stage_trace(const StageTraceSpec& spec, TraceSink& sink) { Emitter(spec, &sink).run(); }

}  // namespace trainsim
