#include "time/explain_time.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "explanation.h"

namespace trainsim {
namespace {

std::string pointer(const char* key) { return std::string("/time/breakdown/") + key; }

std::string bytes_text(double bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g GB", bytes / 1e9);
  return text;
}

constexpr const char* kOpSource =
    "the stage's ops priced one by one (time/op_time.cpp): each pass takes "
    "max(FLOPs / (peak x efficiency), HBM bytes / (bandwidth x efficiency)) plus its kernels' "
    "latency; efficiencies and their sources per op in the per-op table "
    "(time.ops: measured table, shape model, microbenchmark or fitted preset figure)";

}  // namespace

void explain_time_breakdown(const Config& config, const StageTimeFigures& f,
                            const TimeBreakdown& b, std::vector<Explanation>& out) {
  const std::string stage = "stage " + std::to_string(f.stage);
  const ExplanationTerm m = term("m", f.micro_batches_per_chunk, "count",
                                 "micro-batches each chunk runs per step (half of them per direction under DualPipe)");
  auto per_mb = [&](const char* key, double value, const char* symbol, double per, const std::string& meaning,
                    const char* source) {
    out.push_back({pointer(key), value, std::string("m * ") + symbol, {m, term(symbol, per, "s", meaning)}, source});
  };
  per_mb("forward_s", b.forward_s, "F", f.forward_s, "forward compute of one micro-batch on " + stage + " (all chunks)", kOpSource);
  per_mb("backward_s", b.backward_s, "B", f.backward_s, "backward compute of one micro-batch on " + stage, kOpSource);
  per_mb("recompute_s", b.recompute_s, "R", f.recompute_s,
         "forward ops re-run before the backward under activation recompute, one micro-batch", kOpSource);
  out.push_back({pointer("host_overhead_s"), b.host_overhead_s, "m * (H_f + H_b)",
                 {m, term("H_f", f.forward_host_s, "s", "GPU idle waiting for kernel launches and host syncs, forward of one micro-batch"),
                  term("H_b", f.backward_host_s, "s", "the same in its backward")},
                 "launch cost per kernel and host syncs (system.efficiency.host; time/chunk_time.cpp): the GPU "
                 "waits where the CPU issues kernels slower than they run; CUDA-graph-captured scopes launch once"});
  const char* comm_source =
      "collectives priced by the link model (time/collectives.cpp: fixed cost + bytes / achieved bus "
      "bandwidth, NCCL ring/tree steps, nccl-tests busbw), minus what overlaps with compute "
      "(training.overlap)";
  per_mb("tp_comm_exposed_s", b.tp_comm_exposed_s, "C_tp", f.tp_s,
         "exposed tensor-parallel all-gather / reduce-scatter of one micro-batch (Megatron-LM sequence parallelism, "
         "Korthikanti et al. 2022)", comm_source);
  per_mb("cp_comm_exposed_s", b.cp_comm_exposed_s, "C_cp", f.cp_s,
         "exposed context-parallel K/V exchange of one micro-batch (ring attention or all-to-all)", comm_source);
  const bool ep_overlap = config.training.overlap.moe_ep_comm;
  const bool shared_overlap = config.training.overlap.moe_shared_expert;
  out.push_back(
      {pointer("ep_comm_exposed_s"), b.ep_comm_exposed_s, "max(0, m * C_ep - X_ep)",
       {m,
        term("C_ep", f.ep_s, "s",
             shared_overlap ? "expert all-to-all (dispatch + combine) of one micro-batch less the " +
                                  std::to_string(f.shared_hidden_ep_s) +
                                  " s the shared experts hide beside it (moe_shared_expert_overlap, "
                                  "megatron/core/transformer/moe/shared_experts.py)"
                            : std::string("expert all-to-all (dispatch + combine) of one micro-batch")),
        term("X_ep", f.hidden_ep_s, "s",
             ep_overlap ? "all-to-all hidden by the merged steps of overlap_moe_expert_parallel_comm: each steady "
                          "1F1B step runs one micro-batch's forward beside another's backward layer by layer, "
                          "the all-to-all on its own stream (megatron/core/models/common/"
                          "model_chunk_schedule_plan.py; time/ep_overlap.cpp), less the overlap slowdown "
                          "(the compute beside it loses the SMs the all-to-all holds); warm-up and cool-down "
                          "passes run alone"
                        : "all-to-all DualPipe hides behind the paired micro-batch's compute (DeepSeek-V3 "
                          "report, section 3.2.1)")},
       comm_source});
  out.push_back({pointer("activation_offload_exposed_s"), b.activation_offload_exposed_s, "m * X_off",
                 {m, term("X_off", f.offload_exposed_s, "s",
                          "GPU waiting for activation copies of one micro-batch (D2H in the forward, H2D in the "
                          "backward, each the offloaded layers' saved bytes / achieved host link)")},
                 "activation CPU offload (training.activation_offload_layers; time/activation_offload_time.cpp): "
                 "Transformer Engine's DefaultOffloadSynchronizer (transformer_engine/pytorch/cpu_offload.py) copies "
                 "layer i's saved tensors during the next layers' forward and reloads them during the later layers' "
                 "backward on one stream; only the part the compute does not hide is exposed"});
  const ExplanationTerm busy = term(
      "W", f.busy_s, "s",
      "this stage's work in the pipeline: forward + backward + recompute + host waits + exposed TP/CP/EP + activation offload waits + "
      "ZeRO 2/3 communication inside the passes");
  const ExplanationTerm makespan = term("T", f.makespan_s, "s",
                                        "the pipeline's makespan (the schedule simulated pass by pass)");
  const char* schedule_source =
      "the pipeline schedule replayed pass by pass (time/pipeline_run.cpp; 1F1B and interleaved as "
      "megatron/core/pipeline_parallel/schedules.py, zero-bubble Qi et al. 2023, DualPipe DeepSeek-V3 report)";
  out.push_back({pointer("pp_comm_exposed_s"), b.pp_comm_exposed_s, "min(max(0, T - W), P)",
                 {makespan, busy, term("P", f.p2p_s, "s",
                       "this stage's send/recv time in the run: every transfer it takes part in when "
                       "transfers block, the waits for its inputs under overlap_p2p_comm (interleaved, "
                       "each wait counted up to one transfer)")},
                 schedule_source});
  const ExplanationTerm pp = term("X_pp", b.pp_comm_exposed_s, "s", "exposed PP send/recv (above)");
  out.push_back({pointer("stage_imbalance_s"), b.stage_imbalance_s, "min(max(0, W_max - W), max(0, T - W) - X_pp)",
                 {term("W_max", f.bottleneck_busy_s, "s",
                       "the busiest stage's work in the pipeline (stage " + std::to_string(f.bottleneck_stage) + ")"),
                  busy, makespan, pp},
                 "idle time while the busiest stage does the work it has more than this one (uneven layers per "
                 "stage, embedding and head); the rest of the idle time is the schedule's own bubble"});
  out.push_back({pointer("bubble_s"), b.bubble_s, "max(0, T - W) - X_pp - X_imb",
                 {makespan, busy, pp, term("X_imb", b.stage_imbalance_s, "s", "stage imbalance (above)")},
                 schedule_source});
  out.push_back({pointer("straggler_s"), b.straggler_s, "(r - 1) * T",
                 {term("r", f.straggler_ratio, "fraction",
                       "straggler ratio 1 + x / (x + 1) x c x sqrt(x), x = log2(nodes a data-parallel group spans), "
                       "c = system.straggler_coefficient = " + std::to_string(config.system.straggler_coefficient)),
                  makespan},
                 "SimuMax's empirical straggler model (perf_llm.py)"});
  out.push_back({pointer("dp_comm_exposed_s"), b.dp_comm_exposed_s, "D_pass + D_step",
                 {term("D_pass", f.dp_in_pipeline_s, "s",
                       "ZeRO 2/3 reduce-scatters and gathers per micro-batch that compute does not hide"),
                  term("D_step", f.dp_step_exposed_s, "s",
                       "gradient reduce-scatter / all-reduce and parameter all-gather after the pipeline, less "
                       "what overlaps with the last backwards and, for the reduction, the stage's idle after "
                       "its own last pass")},
                 "time/dp_optimizer_time.cpp: Megatron DDP / DistributedOptimizer (ZeRO 0/1), Megatron-FSDP "
                 "(ZeRO 2/3; Rajbhandari et al. 2020, section 5), priced by the link model (time/collectives.cpp)"});
  Explanation opt{pointer("optimizer_s"), b.optimizer_s, "", {},
                  "Adam over this GPU's shard as HBM-bound passes (megatron/core/optimizer: zero_grad_buffer, "
                  "clip_grad_norm, FusedAdam/multi_tensor_adam, copy to bf16 params), each bytes / (HBM "
                  "bandwidth x system.efficiency.memory) + kernel latency (time/dp_optimizer_time.cpp)"};
  // The GPU passes add up; with optimizer CPU offload the GPU part's Adam + copy runs beside
  // the host's step and its copies (time/dp_optimizer_time.cpp, HybridDeviceOptimizer.step).
  bool offload = false;
  for (const OptimizerPass& pass : f.optimizer) {
    const std::string name = pass.name;
    const bool host_side = name == "d2h" || name == "host_adam" || name == "h2d";
    offload = offload || host_side;
    const std::string symbol = "t_" + name;
    if (name != "adam" && name != "copy_params" && !host_side) {
      opt.formula += (opt.formula.empty() ? "" : " + ") + symbol;
    }
    opt.terms.push_back(term(symbol, pass.seconds, "s",
                             name + ": " + bytes_text(pass.bytes) +
                                 (name == "d2h" || name == "h2d" ? " over the host link"
                                  : name == "host_adam"          ? " through host memory (fused CPU AdamW)"
                                                                 : " of HBM traffic")));
  }
  const std::string gpu_step = "(t_adam + t_copy_params)";
  std::string tail = gpu_step;
  if (offload) {
    tail = config.training.overlap_cpu_optimizer_d2h_h2d
               ? "max(max(" + gpu_step + ", t_d2h), max(t_host_adam, t_h2d))"
               : "t_d2h + max(" + gpu_step + ", t_host_adam) + t_h2d";
  }
  opt.formula += (opt.formula.empty() ? "" : " + ") + tail;
  out.push_back(std::move(opt));
}

}  // namespace trainsim
