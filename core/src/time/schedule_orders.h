// Per-rank pass orders of the pipeline schedules trainsim knows, for the
// order-driven simulator of schedule_runner.h, and what each needs in memory.
//
//   1f1b            Megatron-LM's 1F1B (vpp == 1) or interleaved 1F1B (vpp > 1),
//                   with Megatron's blocking p2p as explicit transfers: the same
//                   times as simulate_pipeline() (pipeline_schedule.h)
//   zero_bubble_h1  Qi et al., arXiv:2401.10241 section 2.1 (handcrafted ZB-H1)
//   zero_bubble_h2  the same, section 2.2 (handcrafted ZB-H2)
//   zero_bubble_v   the same (arXiv version, ZB-V) and arXiv:2405.15362 (V-ZB)
//   dualpipe        DeepSeek-V3 arXiv:2412.19437 section 3.2.1 (deepseek-ai/DualPipe)
//   dualpipe_v      DualPipeV, "cut-in-half" DualPipe (deepseek-ai/DualPipe README)
//
// Each generator names the file and function it follows. The zero-bubble and
// DualPipe schedules use async p2p (see schedule_runner.h): their runtimes post
// isend/irecv ahead of time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "time/schedule_runner.h"
#include "trainsim/spec.h"

namespace trainsim {

// The config's training.pipeline_schedule (trainsim/spec.h).
using PipelineScheduleKind = PipelineSchedule;

// Config spellings, in enum order (the `training.pipeline_schedule` values).
inline constexpr std::array<const char*, 6> kPipelineScheduleNames = {
    "1f1b", "zero_bubble_h1", "zero_bubble_h2", "zero_bubble_v", "dualpipe", "dualpipe_v"};

const char* pipeline_schedule_name(PipelineScheduleKind kind);
std::optional<PipelineScheduleKind> parse_pipeline_schedule(std::string_view name);

// Empty when the schedule runs with pp ranks, vpp chunks per rank and m
// micro-batches, else why not, in the config-error register (lowercase, no
// final period), e.g. "dualpipe needs an even pp, got 3". The limits are the
// ones the reference implementations assert; each is cited where it is checked.
std::string schedule_supported(PipelineScheduleKind kind, int64_t pp, int64_t vpp, int64_t m);

struct OrderOptions {
  /// 1f1b only: Megatron's blocking send/recv as transfer actions (its default,
  /// and what simulate_pipeline replays); false: async p2p like the others.
  bool explicit_p2p = true;
  /// zero_bubble_v only: the representative pass times its greedy generator
  /// plans with (the runtime passes the median over stages of measured times,
  /// runtime.py avg_then_mid) and the share of an activation a B leaves for its W.
  double forward_s = 1.0;
  double backward_s = 1.0;
  double weight_s = 1.0;
  double p2p_s = 0.0;
  double weight_kept_fraction = 32.0 / 34.0;  ///< weight_kept_fraction(h, 0, s)
};

// The orders of `kind`. Precondition: schedule_supported() is empty, else
// throws InternalError. The result passes check_schedule_orders().
ScheduleOrders make_schedule_orders(PipelineScheduleKind kind, int64_t pp, int64_t vpp, int64_t m,
                                    const OrderOptions& options = {});

// What stage_memory needs from a schedule.
struct ScheduleMemoryNeeds {
  /// How many model stages' weights (and gradients and optimizer states) each
  /// rank holds, relative to the pp-way split of plain 1F1B: DualPipe keeps
  /// stage r and stage pp - 1 - r on rank r (DeepSeek-V3 Table 2, "Parameter 2x").
  int32_t parameter_copies = 1;
  /// Layers of chunk c on rank r are the model's virtual stage
  /// chunk_stage[r][c] out of num_model_stages equal parts (Megatron's chunk c
  /// of rank r is c * pp + r; V shapes hold r and 2pp - 1 - r; DualPipe r and
  /// pp - 1 - r of a pp-way split).
  int32_t num_model_stages = 1;
  std::vector<std::vector<int32_t>> chunk_stage;
  std::vector<ActivationPeak> ranks;  ///< activation_peaks() of the orders
};

ScheduleMemoryNeeds schedule_memory_needs(PipelineScheduleKind kind, int64_t pp, int64_t vpp,
                                          int64_t m, const OrderOptions& options = {});

namespace detail {

// The generators, exposed for tests (sizes as checked by schedule_supported()).
ScheduleOrders megatron_orders(int32_t pp, int32_t vpp, int32_t m, bool explicit_p2p);
ScheduleOrders zero_bubble_h_orders(int32_t pp, int32_t m, int32_t warmup_factor);
ScheduleOrders zero_bubble_v_orders(int32_t pp, int32_t m, const OrderOptions& options);
ScheduleOrders dualpipe_orders(int32_t pp, int32_t m);
ScheduleOrders dualpipe_v_orders(int32_t pp, int32_t m);

// Placements: one route through pp * vpp virtual stages, v on rank v % pp chunk
// v / pp (Megatron), or through 2 pp stages shaped as a V (v and 2pp - 1 - v on
// rank v).
ScheduleOrders megatron_placement(int32_t pp, int32_t vpp, int32_t m);
ScheduleOrders v_placement(int32_t pp, int32_t m);

}  // namespace detail
}  // namespace trainsim
