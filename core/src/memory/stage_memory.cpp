#include "memory/stage_memory.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "memory/explain_memory.h"
#include "memory/peak_names.h"
#include "memory/stage_statics.h"
#include "trainsim/issue.h"

namespace trainsim {
namespace {

struct PeakPoint {
  double bytes = -1.0;
  double transient = 0.0;
  int32_t block = -1;
  int32_t op = -1;
  int64_t layer = -1;
  WalkPhase phase = WalkPhase::kForward;
};

struct ChunkWalk {
  double stored_bytes = 0.0;
  PeakPoint forward;
  PeakPoint backward;
};

void consider(PeakPoint& peak, double base, const WalkPoint& point, int32_t block, int64_t layer) {
  if (base + point.bytes > peak.bytes) {
    peak = {base + point.bytes, point.transient, block, point.op, layer, point.phase};
  }
}

// One micro-batch through a virtual chunk: blocks run back to back, each
// adding its stored bytes; the last repeat of a run dominates its peaks.
ChunkWalk walk_chunk(const ModelPlan& plan, const ChunkPlan& chunk) {
  ChunkWalk walk;
  double base = 0.0;
  for (const BlockRun& run : chunk.runs) {
    const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
    const double last = base + static_cast<double>(run.repeat - 1) * block.walk.stored_bytes;
    const int64_t layer =
        run.first_layer < 0 ? -1 : run.first_layer + (run.repeat - 1) * block.num_layers;
    consider(walk.forward, last, block.walk.forward_peak, run.block, layer);
    consider(walk.backward, last, block.walk.backward_peak, run.block, layer);
    base += static_cast<double>(run.repeat) * block.walk.stored_bytes;
  }
  walk.stored_bytes = base;
  if (walk.forward.bytes < base) walk.forward = {base, 0.0, -1, -1, -1, WalkPhase::kForward};
  if (walk.backward.bytes < 0.0) walk.backward = {0.0, 0.0, -1, -1, -1, WalkPhase::kBackward};
  return walk;
}

// Megatron's interleaved schedule table: micro-batches in groups, each group
// through every virtual chunk (schedules.py, get_schedule_table); entry k is
// the chunk of step k. The same for every stage.
std::vector<int32_t> interleaved_chunks(int64_t vpp, int64_t micro_batches, int64_t group) {
  std::vector<int32_t> chunk_of;
  chunk_of.reserve(static_cast<size_t>(vpp * micro_batches));
  for (int64_t low = 0; low < micro_batches; low += group) {
    const int64_t high = std::min(micro_batches, low + group);
    for (int64_t chunk = 0; chunk < vpp; ++chunk) {
      for (int64_t mb = low; mb < high; ++mb) chunk_of.push_back(static_cast<int32_t>(chunk));
    }
  }
  return chunk_of;
}

struct ActivationPeak {
  PeakPoint point;       ///< absolute live bytes at the peak
  int64_t in_flight = 0;  ///< micro-batch chunks alive at the peak
  double others_bytes = 0.0;  ///< of point.bytes: the other live chunks' activations
};

ActivationPeak one_f_one_b_peak(const ChunkWalk& walk, int64_t in_flight) {
  ActivationPeak peak;
  const double earlier = static_cast<double>(in_flight - 1) * walk.stored_bytes;
  peak.point = walk.forward.bytes >= walk.backward.bytes ? walk.forward : walk.backward;
  peak.point.bytes += earlier;
  peak.in_flight = in_flight;
  peak.others_bytes = earlier;
  return peak;
}

// Replays the forward/backward order of one stage (warm-up forwards, then
// forward/backward pairs, then the remaining backwards) and keeps the peak.
ActivationPeak interleaved_peak(const std::vector<ChunkWalk>& walks, int64_t pp, int64_t stage,
                                const std::vector<int32_t>& chunk_of) {
  ActivationPeak peak;
  double live = 0.0;
  int64_t alive = 0;
  auto step = [&](bool forward, int64_t chunk) {
    const ChunkWalk& walk = walks[static_cast<size_t>(chunk)];
    const PeakPoint& point = forward ? walk.forward : walk.backward;
    // A chunk's backward walk starts with its own stored bytes already live.
    const double base = forward ? live : live - walk.stored_bytes;
    if (base + point.bytes > peak.point.bytes) {
      peak.point = point;
      peak.point.bytes += base;
      peak.in_flight = alive + (forward ? 1 : 0);
      peak.others_bytes = base;
    }
    live += forward ? walk.stored_bytes : -walk.stored_bytes;
    alive += forward ? 1 : -1;
  };
  const auto vpp = static_cast<int64_t>(walks.size());
  const auto total = static_cast<int64_t>(chunk_of.size());
  // schedules.py get_pp_rank_microbatches caps the warm-up at the total (older
  // Megatron-LM ran every forward first when micro-batches == pp; the current one
  // does not, and neither does the time replay, pipeline_interleaved.cpp).
  const int64_t warmup = std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  const int32_t* chunk = chunk_of.data();
  for (int64_t k = 0; k < warmup; ++k) step(true, chunk[k]);
  for (int64_t k = 0; k < total - warmup; ++k) {
    step(true, chunk[k + warmup]);
    step(false, vpp - 1 - chunk[k]);
  }
  for (int64_t k = total - warmup; k < total; ++k) step(false, vpp - 1 - chunk[k]);
  return peak;
}

// The peak of a schedule given by its in-flight counts (see the header): the
// live chunk activations, with the running op's working set on top of the
// chunk whose walk adds the most beyond its stored bytes.
ActivationPeak scheduled_peak(const std::vector<ChunkWalk>& walks, const RankInFlight& rank,
                              double kept_fraction) {
  ActivationPeak peak;
  if (rank.running_chunk >= 0) {
    // The moment activation_peaks() found with the running pass's own working set;
    // the in-flight count reported stays that of the most live activations.
    double live = 0.0;
    for (size_t c = 0; c < walks.size(); ++c) {
      live += walks[c].stored_bytes * (static_cast<double>(rank.peak_alive[c]) +
                                       kept_fraction * static_cast<double>(rank.peak_waiting[c]));
      peak.in_flight += rank.in_flight_per_chunk[c];
    }
    const ChunkWalk& walk = walks[static_cast<size_t>(rank.running_chunk)];
    peak.point = rank.running_backward ? walk.backward : walk.forward;
    peak.others_bytes = live - walk.stored_bytes;
    peak.point.bytes += peak.others_bytes;
    return peak;
  }
  double live = 0.0;
  int32_t running = -1;
  double extra = -1.0;
  for (size_t c = 0; c < walks.size(); ++c) {
    const ChunkWalk& walk = walks[c];
    const int32_t alive = rank.in_flight_per_chunk[c];
    live += walk.stored_bytes * (static_cast<double>(alive) +
                                 kept_fraction * static_cast<double>(rank.waiting_per_chunk[c]));
    peak.in_flight += alive;
    const double over = std::max(walk.forward.bytes, walk.backward.bytes) - walk.stored_bytes;
    if (alive > 0 && over > extra) {
      extra = over;
      running = static_cast<int32_t>(c);
    }
  }
  if (running < 0) {  // nothing in flight: the first forward's walk
    running = 0;
    live += walks[0].stored_bytes;
    peak.in_flight = 1;
  }
  const ChunkWalk& walk = walks[static_cast<size_t>(running)];
  peak.point = walk.forward.bytes >= walk.backward.bytes ? walk.forward : walk.backward;
  peak.others_bytes = live - walk.stored_bytes;
  peak.point.bytes += peak.others_bytes;
  return peak;
}

}  // namespace

std::vector<std::vector<PassOverBytes>> chunk_pass_over_bytes(const ModelPlan& plan) {
  std::vector<std::vector<PassOverBytes>> bytes(plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    for (const ChunkPlan& chunk : plan.stages[s]) {
      const ChunkWalk walk = walk_chunk(plan, chunk);
      bytes[s].push_back({walk.forward.bytes - walk.stored_bytes, walk.backward.bytes - walk.stored_bytes});
    }
  }
  return bytes;
}

std::vector<std::vector<double>> chunk_stored_bytes(const ModelPlan& plan) {
  std::vector<std::vector<double>> bytes(plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    for (const ChunkPlan& chunk : plan.stages[s]) bytes[s].push_back(walk_chunk(plan, chunk).stored_bytes);
  }
  return bytes;
}

std::vector<StageMemory> estimate_stage_memory(const Config& config, const ModelPlan& plan,
                                               bool describe_peaks,
                                               const ScheduleInFlight* in_flight,
                                               std::vector<Explanation>* explain) {
  const ParallelSpec& p = config.training.parallel;
  const int64_t micro_batches = config.training.num_micro_batches;
  // Interleaved schedule table, groups of pp micro-batches (Megatron's default).
  const std::vector<int32_t> chunk_of =
      p.vpp > 1 && p.schedule == PipelineSchedule::kOneFOneB ? interleaved_chunks(p.vpp, micro_batches, p.pp) : std::vector<int32_t>{};
  std::vector<StageMemory> stages;
  stages.reserve(plan.stages.size());
  for (size_t stage = 0; stage < plan.stages.size(); ++stage) {
    StageMemory s;
    s.stage = static_cast<int64_t>(stage);
    std::vector<ChunkWalk> walks;
    walks.reserve(plan.stages[stage].size());
    // Activation CPU offload: the offloaded layers' saved bytes of one micro-batch (their
    // blocks save nothing on the GPU, model/model_plan.h Block::offloaded_bytes).
    double offloaded_per_micro_batch_bytes = 0.0;
    for (const ChunkPlan& chunk : plan.stages[stage]) {
      s.layers_per_chunk.push_back(chunk.num_layers);
      walks.push_back(walk_chunk(plan, chunk));
      s.activations_per_micro_batch_bytes += walks.back().stored_bytes;
      for (const BlockRun& run : chunk.runs) {
        offloaded_per_micro_batch_bytes +=
            static_cast<double>(run.repeat) * plan.blocks[static_cast<size_t>(run.block)]->offloaded_bytes;
      }
    }
    const StageStatics statics = stage_statics(config, plan, stage, false);
    s.dense_parameters = statics.dense_parameters;
    s.expert_parameters = statics.expert_parameters;
    s.parameters_bytes = statics.parameters_bytes;
    s.gradients_bytes = statics.gradients_bytes;
    s.optimizer_bytes = statics.optimizer_bytes;
    s.host_bytes = statics.host_bytes;
    s.buffers_bytes = statics.buffers_bytes + statics.workspace_bytes;
    s.workspace_bytes = statics.workspace_bytes;
    ActivationPeak peak;
    if (p.schedule != PipelineSchedule::kOneFOneB) {
      TRAINSIM_CHECK(in_flight != nullptr && in_flight->ranks.size() == plan.stages.size(),
                     "stage memory: the schedule's in-flight counts are missing");
      peak = scheduled_peak(walks, in_flight->ranks[stage], in_flight->weight_kept_fraction);
    } else if (p.vpp == 1) {
      const int64_t alive = std::min(p.pp - static_cast<int64_t>(stage), micro_batches);
      peak = one_f_one_b_peak(walks[0], std::max<int64_t>(alive, 1));
    } else {
      peak = interleaved_peak(walks, p.pp, static_cast<int64_t>(stage), chunk_of);
    }
    s.in_flight_micro_batches = peak.in_flight;
    // The offloaded activations wait in pinned host memory from their micro-batch's forward
    // to its backward: Transformer Engine allocates the pinned buffers when a layer's offload
    // starts and drops them after its reload (transformer_engine/pytorch/cpu_offload.py,
    // OffloadableLayerState, retain_pinned_cpu_buffers false). Megatron-LM allows it only at
    // pp 1 (transformer_config.py), where one micro-batch is in flight.
    s.host_bytes += offloaded_per_micro_batch_bytes * static_cast<double>(std::max<int64_t>(peak.in_flight, 1));
    s.transient_bytes = peak.point.transient;
    s.activations_bytes = peak.point.bytes - peak.point.transient;
    if (describe_peaks) {
      s.peak_op = describe_op(plan, peak.point.block, peak.point.op, peak.point.layer, peak.point.phase);
    }
    s.peak_bytes = s.parameters_bytes + s.gradients_bytes + s.optimizer_bytes + s.buffers_bytes +
                   s.activations_bytes + s.transient_bytes;
    if (explain != nullptr) {
      ActivationPeakFigures figures;
      figures.others_bytes = peak.others_bytes;
      figures.running_bytes = peak.point.bytes - peak.others_bytes;
      figures.one_f_one_b = p.schedule == PipelineSchedule::kOneFOneB && p.vpp == 1;
      figures.stored_per_chunk_bytes = walks[0].stored_bytes;
      explain_stage_allocated(config, statics, figures, s, *explain);
    }
    stages.push_back(std::move(s));
  }
  return stages;
}

}  // namespace trainsim
