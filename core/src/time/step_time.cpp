#include "time/step_time.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "model/flops.h"
#include "model/output_wgrad_deferral.h"
#include "time/activation_offload_time.h"
#include "time/chunk_time.h"
#include "time/collectives.h"
#include "time/dp_optimizer_time.h"
#include "time/ep_overlap.h"
#include "time/explain_time.h"
#include "time/op_table.h"
#include "time/pipeline_run.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

// SimuMax's empirical straggler model (perf_llm.py): slowdown grows with the
// number of nodes a data-parallel group spans.
double straggler_ratio(const Config& config) {
  const ParallelSpec& p = config.training.parallel;
  const double c = config.system.straggler_coefficient;
  const int64_t world = config.system.num_gpus;
  const int64_t nodes = (world + config.system.gpus_per_node - 1) / config.system.gpus_per_node;
  const int64_t expert_dp = world / (p.ep * p.etp * p.pp);
  const double n = d(std::max<int64_t>(1, std::min({nodes, p.dp, expert_dp})));
  if (c <= 0.0 || n <= 1.0) return 1.0;
  const double x = std::log2(n);
  return 1.0 + x / (x + 1.0) * c * std::sqrt(x);
}

// The stage as data-parallel communication sees it: each chunk's FSDP units
// (a transformer layer, or the embedding / head block) in forward order and the
// chunk's forward and backward per micro-batch.
DpStage dp_stage(const ModelPlan& plan, size_t stage, const std::vector<ChunkTime>& chunks,
                 const StageMemory& memory, double passes) {
  DpStage dp;
  dp.dense = memory.dense_parameters;
  dp.expert = memory.expert_parameters;
  dp.passes = passes;
  for (size_t c = 0; c < plan.stages[stage].size(); ++c) {
    DpChunk chunk;
    chunk.forward_s = chunks[c].forward_phase_s();
    chunk.backward_s = chunks[c].backward_phase_s();
    for (const BlockRun& run : plan.stages[stage][c].runs) {
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      const double layers = d(std::max<int64_t>(1, block.num_layers));
      DpUnit unit;
      for (const Op& op : block.ops) unit.dense += op.dense_params, unit.expert += op.expert_params;
      unit.dense /= layers;
      unit.expert /= layers;
      unit.count = d(run.repeat) * layers;
      if (unit.dense + unit.expert > 0.0) chunk.units.push_back(unit);
    }
    dp.chunks.push_back(std::move(chunk));
  }
  return dp;
}

// EP overlap (time/ep_overlap.h): per rank, what a merged step of chunk f's forward and chunk
// b's backward saves, [rank][f * chunks + b]. The layers of each block are split into
// Megatron's schedule nodes once; the embedding and head run outside the merged layers.
std::vector<std::vector<double>> merged_savings(const Config& config, const ModelPlan& plan,
                                                const std::vector<std::vector<OpTime>>& per_op) {
  std::vector<std::vector<LayerParts>> block_parts(plan.blocks.size());
  for (size_t b = 0; b < plan.blocks.size(); ++b) block_parts[b] = block_layer_parts(plan.blocks[b]->ops, per_op[b]);
  std::vector<std::vector<double>> savings;
  for (const auto& stage : plan.stages) {
    std::vector<std::vector<LayerParts>> chunk_layers;
    for (const ChunkPlan& chunk : stage) {
      chunk_layers.emplace_back();
      for (const BlockRun& run : chunk.runs) {
        const std::vector<LayerParts>& layers = block_parts[static_cast<size_t>(run.block)];
        for (int64_t k = 0; k < run.repeat; ++k) {
          chunk_layers.back().insert(chunk_layers.back().end(), layers.begin(), layers.end());
        }
      }
    }
    savings.emplace_back();
    const double sm_fraction = comm_sm_fraction(config);  // the overlap slowdown
    for (const auto& forward : chunk_layers) {
      for (const auto& backward : chunk_layers) {
        const MergedLayers merged = merge_layers(forward, backward, config.training.overlap.delay_wgrad);
        savings.back().push_back(net_overlap_saving_s(merged.hidden_s(), sm_fraction));
      }
    }
  }
  return savings;
}

// --defer-embedding-wgrad-compute: the output layer's weight-gradient pass of one
// micro-batch in this chunk (0 without an output layer): its GEMM and whatever
// communication the weight-gradient pass carries.
double output_layer_wgrad_s(const ModelPlan& plan, const std::vector<std::vector<OpTime>>& per_op,
                            const ChunkPlan& chunk) {
  constexpr auto w = static_cast<size_t>(Pass::kBackwardWeight);
  double total = 0.0;
  for (const BlockRun& run : chunk.runs) {
    const auto b = static_cast<size_t>(run.block);
    const OpList& ops = plan.blocks[b]->ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (std::string_view(ops[i].name) != "output_layer") continue;
      total += d(run.repeat) * (per_op[b][i].compute_s[w] + per_op[b][i].comm[w].total());
    }
  }
  return total;
}

double busy_s(const TimeBreakdown& b) {
  return b.forward_s + b.backward_s + b.recompute_s + b.host_overhead_s + b.tp_comm_exposed_s + b.cp_comm_exposed_s +
         b.ep_comm_exposed_s + b.activation_offload_exposed_s;
}

// A stage also idles while the busiest stage (the bottleneck) does the work it
// has more: busy(bottleneck) - busy(stage) of its idle time is stage imbalance;
// what remains after the exposed p2p is the schedule's own bubble, the idle
// time of the bottleneck itself (makespan = busy(bottleneck) + its bubble + p2p).
void split_stage_imbalance(TimeEstimate& time, const std::vector<double>& dp_in_pipeline_s) {
  double most = -1.0;
  for (const StageTime& st : time.stages) {
    const double busy = busy_s(st.breakdown) + dp_in_pipeline_s[static_cast<size_t>(st.stage)];
    if (busy > most) {
      most = busy;
      time.bottleneck_stage = st.stage;
    }
  }
  for (StageTime& st : time.stages) {
    TimeBreakdown& b = st.breakdown;
    const double busy = busy_s(b) + dp_in_pipeline_s[static_cast<size_t>(st.stage)];
    b.stage_imbalance_s = std::clamp(most - busy, 0.0, b.bubble_s);
    b.bubble_s -= b.stage_imbalance_s;
  }
}

void fill_throughput(const Config& config, const std::vector<double>& stage_flops,
                     Estimate& out) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  Throughput& tp = out.throughput;
  const double world = d(config.system.num_gpus);
  const double sequences = d(t.micro_batch_size) * d(t.num_micro_batches) * d(p.dp);
  const double step = out.time.iteration_s;
  tp.tokens_per_step = sequences * d(t.seq_len);
  tp.tokens_per_s = tp.tokens_per_step / step;
  tp.tokens_per_s_per_gpu = tp.tokens_per_s / world;
  tp.model_flops_per_step = model_flops_per_step(config.model, t.seq_len, sequences,
                                                 FlopConvention::kMegatron,
                                                 computed_routed_fraction(t));
  tp.model_tflops_per_gpu = tp.model_flops_per_step / step / world / 1e12;
  // Megatron-LM reports MFU against the dense bf16 peak whatever the precision
  // (megatron/training/training.py; the Megatron-Bridge performance tables do
  // the same); the fp8 / fp4 peak figure is reported beside it.
  const GpuSpec& gpu = config.system.gpu;
  tp.mfu = tp.model_tflops_per_gpu * 1e12 / gpu.peak_bf16_flops_per_s;
  if (t.dtype == Dtype::kFp8 && gpu.peak_fp8_flops_per_s > 0.0) {
    tp.mfu_fp8_peak = tp.model_tflops_per_gpu * 1e12 / gpu.peak_fp8_flops_per_s;
  }
  double executed = 0.0;  // every GPU of a stage executes that stage's FLOPs
  for (const double flops : stage_flops) executed += flops;
  tp.hardware_tflops_per_gpu = executed / d(stage_flops.size()) / step / 1e12;
  tp.flop_convention = flop_convention_name(FlopConvention::kMegatron);
  tp.seconds_per_trillion_tokens = 1e12 / tp.tokens_per_s;
  tp.gpu_hours_per_trillion_tokens = tp.seconds_per_trillion_tokens * world / 3600.0;
  if (t.train_tokens > 0.0) {
    tp.time_to_train_s = t.train_tokens / tp.tokens_per_s;
    tp.gpu_hours_to_train = tp.time_to_train_s * world / 3600.0;
  }
}

}  // namespace

// Activations (or their gradients) crossing a stage boundary: [b, s/cp(/tp under
// SP), h] bf16. boundary[s] is the transfer between stage s and s + 1 (the last
// entry wraps to stage 0, used by the interleaved schedule). Under Megatron-LM's
// scatter/gather (Narayanan et al. 2021, section 4.1; megatron/p2p_communication.py
// 2021-02 to 2023-03, only without SP and when the tensor divides by tp) each TP rank
// sends its 1/tp slice and the receiver all-gathers the slices over the TP group
// before it can start (gather_split_1d_tensor, on the critical path).
std::vector<double> pipeline_boundary_p2p_s(const Config& config) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  std::vector<double> boundary(static_cast<size_t>(p.pp), 0.0);
  if (p.pp == 1) return boundary;
  const int64_t elements = t.micro_batch_size * (t.seq_len / p.cp) * config.model.hidden_size;
  double bytes = d(t.micro_batch_size) * d(t.seq_len) * d(config.model.hidden_size) * 2.0 / d(p.cp);
  double gather_s = 0.0;
  if (p.sequence_parallel) {
    bytes /= d(p.tp);
  } else if (p.scatter_gather_tensors_in_pipeline && p.tp > 1 && elements % p.tp == 0) {
    gather_s = collective_time_s(CollectiveKind::kAllGather, bytes, Group::kTp, p, config.system, false);
    bytes /= d(p.tp);
  }
  for (int64_t s = 0; s < p.pp; ++s) {
    const bool inter = pipeline_boundary_crosses_nodes(s, p.pp, config.system.num_gpus,
                                                       config.system.gpus_per_node);
    boundary[static_cast<size_t>(s)] = p2p_time_s(bytes, inter, config.system) + gather_s;
  }
  return boundary;
}

void estimate_time(const Config& config, const ModelPlan& plan,
                   const std::vector<StageMemory>& memory, Estimate& out,
                   const TimeOptions& options) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  const int64_t micro_batches = t.num_micro_batches;
  // Each chunk of a rank runs this many micro-batches (half under DualPipe).
  const double mbc = d(micro_batches_per_chunk(p.schedule, micro_batches));
  const std::vector<std::vector<OpTime>> per_op = block_op_times(config, plan);
  const std::vector<ChunkTime> per_block = block_times(config, plan, per_op);
  PipelineRunInput run_in;
  if (t.overlap.moe_ep_comm) run_in.merged_saving_s = merged_savings(config, plan, per_op);
  run_in.schedule = p.schedule;
  run_in.num_micro_batches = micro_batches;
  run_in.boundary_p2p_s = pipeline_boundary_p2p_s(config);
  run_in.overlap_p2p = t.overlap.p2p;
  const int64_t chunks = static_cast<int64_t>(plan.stages.front().size());
  run_in.record_timeline = options.timeline && !options.pipeline_lower_bound &&
                           p.pp * chunks * micro_batches <= kMaxTimelinePasses;
  std::vector<ChunkTime> stage_totals(plan.stages.size());
  std::vector<double> stage_flops(plan.stages.size(), 0.0);
  // Activation CPU offload: the waits for copies the layers' compute does not hide
  // lengthen each chunk's forward and backward (time/activation_offload_time.h).
  std::vector<double> offload_in_pipeline_s(plan.stages.size(), 0.0);
  std::vector<double> offload_exposed_s(plan.stages.size(), 0.0);  ///< per micro-batch
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    run_in.chunks.emplace_back();
    for (const ChunkPlan& chunk : plan.stages[s]) {
      const ChunkTime ct = chunk_time(per_block, chunk, config.system.efficiency.host);
      run_in.chunks.back().push_back(ct);
      const OffloadTime offload = chunk_offload_time(config, plan, chunk, per_block);
      run_in.chunks.back().back().forward_s += offload.forward_exposed_s;
      run_in.chunks.back().back().backward_s += offload.backward_exposed_s;
      offload_in_pipeline_s[s] += mbc * (offload.forward_exposed_s + offload.backward_exposed_s);
      offload_exposed_s[s] += offload.forward_exposed_s + offload.backward_exposed_s;
      ChunkTime& total = stage_totals[s];
      total.forward_s += ct.forward_s;
      total.backward_s += ct.backward_s;
      total.recompute_s += ct.recompute_s;
      total.weight_s += ct.weight_s;
      total.forward_host_s += ct.forward_host_s;
      total.backward_host_s += ct.backward_host_s;
      total.input_grad_host_s += ct.input_grad_host_s;
      total.weight_host_s += ct.weight_host_s;
      total.forward_comm += ct.forward_comm;
      total.backward_comm += ct.backward_comm;
      total.recompute_comm += ct.recompute_comm;
      total.weight_comm += ct.weight_comm;
      total.shared_hidden_ep_s += ct.shared_hidden_ep_s;
      stage_flops[s] += mbc * ct.executed_flops;
      out.time.measured_efficiency_lookups += ct.measured_lookups;
      out.time.model_efficiency_lookups += ct.model_lookups;
    }
  }
  // ZeRO 2 / 3 communicate every micro-batch: what compute cannot hide lengthens
  // each chunk's forward and backward inside the pipeline (a pass takes at least
  // its communication); the once-per-step part comes after the pipeline.
  std::vector<DpTime> dp(plan.stages.size());
  std::vector<double> dp_in_pipeline_s(plan.stages.size(), 0.0);
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    dp[s] = dp_comm_time(config, dp_stage(plan, s, run_in.chunks[s], memory[s], mbc));
    for (size_t c = 0; c < run_in.chunks[s].size(); ++c) {
      run_in.chunks[s][c].forward_s += dp[s].forward_pass_exposed_s[c];
      // The reduce-scatter carries weight gradients: it follows the W half of the
      // backward (the same B + W where they run together, after W where a zero-bubble
      // or DualPipe schedule runs W apart).
      run_in.chunks[s][c].backward_s += dp[s].backward_pass_exposed_s[c];
      run_in.chunks[s][c].weight_s += dp[s].backward_pass_exposed_s[c];
      dp_in_pipeline_s[s] += mbc * (dp[s].forward_pass_exposed_s[c] + dp[s].backward_pass_exposed_s[c]);
    }
  }
  // Deferred output-layer weight gradients leave the chunk's backward passes (their
  // total spread over its micro-batches) and run after the stage's last pass.
  const int64_t deferred = deferred_wgrad_micro_batches(t);
  std::vector<double> deferred_wgrad_s(plan.stages.size(), 0.0);
  std::vector<int64_t> deferred_chunk(plan.stages.size(), -1);
  for (size_t s = 0; deferred > 0 && s < plan.stages.size(); ++s) {
    for (size_t c = 0; c < plan.stages[s].size(); ++c) {
      const double w = output_layer_wgrad_s(plan, per_op, plan.stages[s][c]);
      if (w <= 0.0) continue;
      const double moved = w * d(deferred) / mbc;
      run_in.chunks[s][c].backward_s -= moved;
      run_in.chunks[s][c].weight_s -= moved;
      deferred_wgrad_s[s] += w * d(deferred);
      deferred_chunk[s] = static_cast<int64_t>(c);
    }
  }
  PipelineRun pipeline = options.pipeline_lower_bound ? pipeline_run_lower_bound(run_in) : run_pipeline(run_in);
  // The drain (schedules.py finish_embedding_wgrad_compute) runs on the stage's compute
  // stream after its last pass and before its gradient reduction. The search's lower
  // bound leaves it out (still a bound: the passes it ran got only shorter).
  for (size_t s = 0; !options.pipeline_lower_bound && s < plan.stages.size(); ++s) {
    if (deferred_wgrad_s[s] <= 0.0) continue;
    const double start = pipeline.finish_s[s];
    pipeline.finish_s[s] += deferred_wgrad_s[s];
    pipeline.makespan_s = std::max(pipeline.makespan_s, pipeline.finish_s[s]);
    if (s < pipeline.timeline.size()) {
      pipeline.timeline[s].push_back({"weight", -1, deferred_chunk[s], start, pipeline.finish_s[s]});
    }
  }
  const double ratio = straggler_ratio(config);
  // The once-per-step DP communication past the pipeline's end: a stage's gradient
  // reduction starts when its own last pass ends (time/dp_optimizer_time.h), so a
  // stage that finishes early hides it in its cool-down; the parameter gather comes
  // after the optimizer step.
  // The search's lower bound does not know when each stage really finishes: it keeps
  // only what no schedule hides, the first stage's reduction under 1F1B and interleaved
  // 1F1B (whose last pass is the first stage's last backward; the zero-bubble and DualPipe
  // schedules may end elsewhere, so they keep none), and the bound stays a bound.
  const bool first_stage_ends_last = p.schedule == PipelineSchedule::kOneFOneB;
  std::vector<double> dp_after_pipeline_s(plan.stages.size(), 0.0);
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const double gather_s = dp[s].step_exposed_s - dp[s].step_reduce_exposed_s;
    if (options.pipeline_lower_bound) {
      dp_after_pipeline_s[s] = gather_s + (s == 0 && first_stage_ends_last ? dp[s].step_reduce_exposed_s : 0.0);
      continue;
    }
    const double reduce_end_s = ratio * pipeline.finish_s[s] + dp[s].step_reduce_exposed_s;
    dp_after_pipeline_s[s] = std::max(0.0, reduce_end_s - ratio * pipeline.makespan_s) + gather_s;
  }
  TimeEstimate& time = out.time;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const ChunkTime& c = stage_totals[s];
    StageTime st;
    st.stage = static_cast<int64_t>(s);
    st.forward_per_micro_batch_s = c.forward_phase_s();
    st.backward_per_micro_batch_s = c.backward_phase_s();
    st.pipeline_s = pipeline.finish_s[s];
    st.dp_comm_s = dp[s].total();
    st.dp_comm_exposed_s = dp_in_pipeline_s[s] + dp_after_pipeline_s[s];
    st.pp_comm_s = pipeline.transfer_s[s];
    st.optimizer_s = optimizer_time_s(config, memory[s].dense_parameters, memory[s].expert_parameters);
    st.total_s = ratio * pipeline.makespan_s + dp_after_pipeline_s[s] + st.optimizer_s;
    TimeBreakdown& b = st.breakdown;
    const CommTimes comm = c.comm();
    b.forward_s = mbc * c.forward_s;
    b.backward_s = mbc * c.backward_s;
    b.recompute_s = mbc * c.recompute_s;
    // A schedule that runs W apart waits on the host for B and for W separately.
    const double backward_host_s = p.schedule == PipelineSchedule::kOneFOneB
                                       ? c.backward_host_s
                                       : c.input_grad_host_s + c.weight_host_s;
    b.host_overhead_s = mbc * (c.forward_host_s + backward_host_s);
    b.tp_comm_exposed_s = mbc * comm.tp_s;
    b.cp_comm_exposed_s = mbc * comm.cp_s;
    // DualPipe's overlapped F&B pairs and EP overlap's merged steps hide expert all-to-all
    // behind the other micro-batch's compute; the shared experts (moe_shared_expert_overlap)
    // hid their part in the chunk times already.
    b.ep_comm_exposed_s = std::max(0.0, mbc * comm.ep_s - pipeline.hidden_ep_s[s]);
    st.ep_comm_s = mbc * (comm.ep_s + c.shared_hidden_ep_s);
    st.ep_comm_hidden_s = st.ep_comm_s - b.ep_comm_exposed_s;
    b.activation_offload_exposed_s = offload_in_pipeline_s[s];
    const double busy = b.forward_s + b.backward_s + b.recompute_s + b.host_overhead_s + b.tp_comm_exposed_s +
                        b.cp_comm_exposed_s + b.ep_comm_exposed_s + b.activation_offload_exposed_s +
                        dp_in_pipeline_s[s];
    // The makespan and the busy parts are summed in different orders: a difference within
    // rounding of the makespan is no idle time (it made the bubble 0 or 1e-15 s for the same
    // plan, depending on how the config's numbers were written).
    const double gap = pipeline.makespan_s - busy;
    const double idle = gap > 1e-12 * pipeline.makespan_s ? gap : 0.0;
    b.pp_comm_exposed_s = std::min(idle, pipeline.p2p_s[s]);
    b.bubble_s = idle - b.pp_comm_exposed_s;
    b.straggler_s = (ratio - 1.0) * pipeline.makespan_s;
    b.dp_comm_exposed_s = st.dp_comm_exposed_s;
    b.optimizer_s = st.optimizer_s;
    if (st.total_s > time.iteration_s) {
      time.iteration_s = st.total_s;
      time.critical_stage = st.stage;
    }
    time.stages.push_back(st);
  }
  split_stage_imbalance(time, dp_in_pipeline_s);
  time.breakdown = time.stages[static_cast<size_t>(time.critical_stage)].breakdown;
  if (options.explain) {
    const auto s = static_cast<size_t>(time.critical_stage);
    const ChunkTime& c = stage_totals[s];
    const CommTimes comm = c.comm();
    StageTimeFigures f;
    f.stage = time.critical_stage;
    f.bottleneck_stage = time.bottleneck_stage;
    f.micro_batches_per_chunk = mbc;
    f.forward_s = c.forward_s;
    f.backward_s = c.backward_s;
    f.recompute_s = c.recompute_s;
    f.forward_host_s = c.forward_host_s;
    f.backward_host_s = p.schedule == PipelineSchedule::kOneFOneB ? c.backward_host_s
                                                                  : c.input_grad_host_s + c.weight_host_s;
    f.tp_s = comm.tp_s;
    f.cp_s = comm.cp_s;
    f.ep_s = comm.ep_s;
    f.hidden_ep_s = pipeline.hidden_ep_s[s];
    f.shared_hidden_ep_s = c.shared_hidden_ep_s;
    f.makespan_s = pipeline.makespan_s;
    f.busy_s = busy_s(time.stages[s].breakdown) + dp_in_pipeline_s[s];
    f.bottleneck_busy_s = busy_s(time.stages[static_cast<size_t>(time.bottleneck_stage)].breakdown) +
                          dp_in_pipeline_s[static_cast<size_t>(time.bottleneck_stage)];
    f.p2p_s = pipeline.p2p_s[s];
    f.dp_in_pipeline_s = dp_in_pipeline_s[s];
    f.offload_exposed_s = offload_exposed_s[s];
    f.dp_step_exposed_s = dp_after_pipeline_s[s];
    f.straggler_ratio = ratio;
    f.optimizer = optimizer_passes(config, memory[s].dense_parameters, memory[s].expert_parameters);
    explain_time_breakdown(config, f, time.breakdown, out.explanations);
  }
  if (options.op_table) {
    time.ops = stage_op_rows(config, plan, per_op, time.critical_stage);
    bool host_waited = false;
    for (const StageTime& st : time.stages) host_waited = host_waited || st.breakdown.host_overhead_s > 0.0;
    out.calibration = calibration_of(config, plan, per_op, host_waited);
  }
  out.timeline.included = run_in.record_timeline;
  if (run_in.record_timeline) {
    for (size_t s = 0; s < pipeline.timeline.size(); ++s) {
      std::vector<TimelineSpan> spans = pipeline.timeline[s];
      const StageTime& st = time.stages[s];
      const double end = ratio * pipeline.makespan_s;
      const double dp_end = end + dp_after_pipeline_s[s];
      spans.push_back({"dp_comm", -1, -1, end, dp_end});
      spans.push_back({"optimizer", -1, -1, dp_end, st.total_s});
      out.timeline.stages.push_back(std::move(spans));
    }
  }
  fill_throughput(config, stage_flops, out);
}

}  // namespace trainsim
