// Outputs of an estimate. Breakdowns are structs whose parts add up to their
// totals; all quantities are SI (bytes, seconds, FLOP).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trainsim {

struct ModelSummary {
  double parameters = 0.0;         ///< all parameters, embeddings included
  double active_parameters = 0.0;  ///< parameters touched by one token (top-k experts)
  int64_t padded_vocab_size = 0;
  int64_t num_moe_layers = 0;
  int64_t num_dense_layers = 0;
};

// A device-memory consumer outside PyTorch's allocator, with its source.
struct MemoryTerm {
  std::string name;
  double bytes = 0.0;
  std::string source;
};

// The caching-allocator replay of a stage's allocation trace (memory/trace_replay.h).
struct AllocatorReplaySummary {
  bool replayed = false;         ///< false: the trace was too long to replay (reserved = allocated)
  std::string granularity;       ///< "op" or "layer" (one tensor per layer, for long traces)
  int64_t events = 0;            ///< allocations and frees replayed
  double peak_allocated_bytes = 0.0;       ///< torch.cuda.max_memory_allocated (rounded blocks)
  double allocated_at_peak_reserved_bytes = 0.0;
  int64_t segments = 0;          ///< cudaMalloc'ed segments at the end
  int64_t device_allocations = 0;  ///< cudaMalloc calls (page mappings with expandable segments)
  int64_t alloc_retries = 0;     ///< allocations that had to free the cache first
  bool out_of_memory = false;    ///< an allocation failed inside the usable capacity
  std::string peak_reserved_at;  ///< the op or buffer whose allocation set the reserved peak
};

// Allocated and reserved bytes through the steady step (maxima over each run of events).
struct MemoryTimelinePoint {
  int64_t event = 0;  ///< last event of the run, from the steady step's start
  double allocated_bytes = 0.0;
  double reserved_bytes = 0.0;
  std::string pass;   ///< e.g. "F mb 3 chunk 0": the pass running at the run's allocated peak
};

// Memory of one pipeline stage (one GPU of that stage), at its peak.
// peak_bytes = parameters + gradients + optimizer + buffers + activations + transient.
struct StageMemory {
  int64_t stage = 0;
  std::vector<int64_t> layers_per_chunk;  ///< transformer layers in each virtual chunk
  double parameters_bytes = 0.0;
  double gradients_bytes = 0.0;           ///< main-grad buffers (fp32 unless grad_reduce_in_bf16)
  double optimizer_bytes = 0.0;           ///< fp32 master weights + Adam moments, sharded per ZeRO
  double host_bytes = 0.0;                ///< pinned host memory: offloaded optimizer part + offloaded activations
  double buffers_bytes = 0.0;             ///< static buffers: TE dummy wgrad tensors + workspace_bytes
  double workspace_bytes = 0.0;           ///< of buffers: cuBLAS workspaces, the output layer's gather buffer
  double activations_bytes = 0.0;         ///< activations held at the peak (in-flight micro-batches)
  double transient_bytes = 0.0;           ///< working set of the op running at the peak
  double peak_bytes = 0.0;                ///< peak allocated bytes (torch max_memory_allocated)
  double reserved_bytes = 0.0;            ///< peak reserved bytes of the allocator replay
  double fragmentation_bytes = 0.0;       ///< reserved - allocated at the reserved peak
  double outside_allocator_bytes = 0.0;   ///< CUDA context, NCCL, userbuffers (sum of outside)
  double device_bytes = 0.0;              ///< reserved + outside: what must fit the usable capacity
  std::vector<MemoryTerm> outside;
  AllocatorReplaySummary allocator;
  std::vector<MemoryTimelinePoint> timeline;
  double activations_per_micro_batch_bytes = 0.0;
  double dense_parameters = 0.0;          ///< parameter elements held by this GPU (non-expert)
  double expert_parameters = 0.0;         ///< routed-expert parameter elements held by this GPU
  int64_t in_flight_micro_batches = 0;    ///< micro-batches whose activations are alive at the peak
  std::string peak_op;                    ///< e.g. "layer 3 mlp.linear_fc2 (backward)"
};

// Does it fit: the stage with the least room decides. device = reserved + outside.
struct MemoryVerdict {
  std::string status = "fits";     ///< fits | tight | out_of_memory
  double margin_bytes = 0.0;       ///< usable - device bytes of the deciding stage (< 0: OOM)
  double usable_bytes = 0.0;       ///< the capacity PyTorch reports (what OOM is checked against)
  double headroom_fraction = 0.0;  ///< "tight" when margin < headroom x usable
  double device_bytes = 0.0;       ///< of the deciding stage
  int64_t stage = 0;               ///< the deciding stage
  std::vector<std::string> reasons;
};

// A nearby plan that fits (memory.suggestions): what changes and how it fares.
struct MemorySuggestion {
  std::string change;            ///< e.g. "tp 2 -> 4"
  std::vector<std::pair<std::string, std::string>> set;  ///< config keys and their new values
  std::string status;            ///< its verdict (fits or tight)
  double margin_bytes = 0.0;
  double device_bytes = 0.0;
  double iteration_s = 0.0;      ///< its step time (0 when not estimated)
};

// One op of the peak stage's distinct blocks: what it saves and needs (one micro-batch).
struct MemoryOpRow {
  std::string block;  ///< e.g. "layer 0-31 (dense)", "embedding", "head"
  std::string op;
  double saved_bytes = 0.0;
  double forward_transient_bytes = 0.0;
  double backward_transient_bytes = 0.0;
};

struct MemoryEstimate {
  double peak_bytes = 0.0;      ///< max over stages of StageMemory::peak_bytes
  double reserved_bytes = 0.0;  ///< max over stages of StageMemory::reserved_bytes
  double device_bytes = 0.0;    ///< max over stages of StageMemory::device_bytes
  double capacity_bytes = 0.0;  ///< GPU HBM capacity
  int64_t peak_stage = 0;
  std::vector<StageMemory> stages;
  MemoryVerdict verdict;
  std::vector<MemorySuggestion> suggestions;
  std::vector<MemoryOpRow> ops;  ///< of the stage with the highest peak
  /// Closed-form references, for comparison only (see memory/reference_formulas.h).
  double korthikanti2022_activations_bytes = 0.0;
  double megatron_theoretical_bytes = 0.0;
};

// Where the step's time goes on the critical stage. The parts add up to
// iteration_s: everything inside the pipeline (compute, exposed in-layer and
// p2p communication, bubble) plus the straggler slowdown, the exposed
// data-parallel communication and the optimizer step.
struct TimeBreakdown {
  double forward_s = 0.0;
  double backward_s = 0.0;
  double recompute_s = 0.0;
  double host_overhead_s = 0.0;  ///< GPU idle waiting for the CPU (launches, host syncs)
  double tp_comm_exposed_s = 0.0;
  double cp_comm_exposed_s = 0.0;
  double ep_comm_exposed_s = 0.0;
  double pp_comm_exposed_s = 0.0;
  double bubble_s = 0.0;           ///< the schedule's own idle time (the bottleneck's)
  double stage_imbalance_s = 0.0;  ///< idle while the bottleneck stage does its extra work
  double straggler_s = 0.0;
  double dp_comm_exposed_s = 0.0;
  double optimizer_s = 0.0;
  /// Activation CPU offload: the GPU waiting for D2H copies of saved activations (forward)
  /// and their H2D reloads (backward) that the layers' compute does not hide.
  double activation_offload_exposed_s = 0.0;
  double total() const {
    return forward_s + backward_s + recompute_s + host_overhead_s + tp_comm_exposed_s + cp_comm_exposed_s +
           ep_comm_exposed_s + pp_comm_exposed_s + bubble_s + stage_imbalance_s + straggler_s +
           dp_comm_exposed_s + optimizer_s + activation_offload_exposed_s;
  }
};

struct StageTime {
  int64_t stage = 0;
  double forward_per_micro_batch_s = 0.0;   ///< all chunks, incl. exposed in-layer comm
  double backward_per_micro_batch_s = 0.0;  ///< all chunks, incl. recompute and its comm
  double pipeline_s = 0.0;                  ///< when its last backward ends
  double dp_comm_s = 0.0;                   ///< reduce-scatter + all-gather, before overlap
  double dp_comm_exposed_s = 0.0;
  /// Expert-parallel all-to-all (and expert-TP collectives) of the step before overlap, and
  /// the part the schedule hides behind another micro-batch's compute (EP overlap, DualPipe's
  /// F&B pairs, shared-expert overlap); breakdown.ep_comm_exposed_s is the rest.
  double ep_comm_s = 0.0;
  double ep_comm_hidden_s = 0.0;
  /// Pipeline send/recv of the step: every transfer the stage sends or receives, hidden or
  /// not; breakdown.pp_comm_exposed_s is the part its compute did not cover.
  double pp_comm_s = 0.0;
  double optimizer_s = 0.0;
  double total_s = 0.0;                     ///< its step time
  TimeBreakdown breakdown;
};

// One op of the critical stage's layers, as priced (per micro-batch, all
// passes: forward + backward + recompute), summed over the stage's identical
// ops of the same name and kind.
struct OpTimeRow {
  std::string name;              ///< e.g. "attention.linear_qkv"
  std::string kind;              ///< gemm, grouped_gemm, attention, elementwise, quantize, ...
  double count = 0.0;            ///< occurrences on the stage per micro-batch
  double flops = 0.0;            ///< per micro-batch, all occurrences
  double bytes = 0.0;            ///< HBM bytes per micro-batch, all occurrences
  double kernels = 0.0;          ///< kernel launches per micro-batch, all occurrences
  double time_s = 0.0;           ///< GPU time per micro-batch, all occurrences
  double efficiency = 0.0;       ///< achieved fraction of the peak (compute) or of HBM bandwidth
  std::string efficiency_source; ///< measured_table | shape_model | microbenchmark | fitted | assumed | memory_bound
};

// Where the figures an estimate used come from (system.provenance).
struct CalibrationFigure {
  std::string figure;  ///< JSON pointer into the system
  std::string kind;    ///< datasheet | measured | microbenchmark | fitted | assumed | config
  std::string source;
};

struct Calibration {
  bool calibrated = true;  ///< false when any figure used is assumed or has no stated provenance
  std::vector<CalibrationFigure> figures;
};

struct TimeEstimate {
  double iteration_s = 0.0;
  int64_t critical_stage = 0;   ///< the stage whose step ends last (its parts are the breakdown)
  int64_t bottleneck_stage = 0;  ///< the stage with the most pipeline work (compute + exposed comm)
  TimeBreakdown breakdown;  ///< of the critical stage
  std::vector<StageTime> stages;
  int64_t measured_efficiency_lookups = 0;  ///< GEMM/attention passes priced from measured tables
  int64_t model_efficiency_lookups = 0;     ///< priced from the shape model or flat values
  std::vector<OpTimeRow> ops;               ///< the critical stage's ops (per micro-batch)
};

struct Throughput {
  double tokens_per_step = 0.0;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  double model_flops_per_step = 0.0;       ///< Megatron-LM convention (causal attention halved)
  double model_tflops_per_gpu = 0.0;
  /// model_tflops_per_gpu / the dense bf16 peak, for every dtype (Megatron-LM's convention)
  double mfu = 0.0;
  /// For fp8 (fp4) runs: model_tflops_per_gpu / the dense fp8 (fp4) peak; 0 otherwise
  double mfu_fp8_peak = 0.0;
  double mfu_fp4_peak = 0.0;
  /// executed FLOPs incl. recompute (causal attention counts the computed half)
  double hardware_tflops_per_gpu = 0.0;
  std::string flop_convention;
  double seconds_per_trillion_tokens = 0.0;
  double gpu_hours_per_trillion_tokens = 0.0;
  double time_to_train_s = 0.0;   ///< training.train_tokens / tokens_per_s (0 when not given)
  double gpu_hours_to_train = 0.0;
};

struct TimelineSpan {
  /// forward, backward (B, or the whole backward), weight (W, weight gradients split off
  /// by zero-bubble / DualPipe schedules), forward_backward (DualPipe's overlapped F&B pair:
  /// micro_batch and chunk are the forward's), send, recv, dp_comm, optimizer
  std::string kind;
  int64_t micro_batch = -1;
  int64_t chunk = -1;
  double start_s = 0.0;
  double end_s = 0.0;
};

struct Timeline {
  bool included = false;                      ///< false when too large to list
  std::vector<std::vector<TimelineSpan>> stages;
};

// One number of the result spelt out: `value` is `formula` evaluated over the
// terms' values (operators + - * / ( ), min(a, b), max(a, b)); `part` is the JSON
// pointer of the number in the result. Written by the estimators that compute
// the number (only with describe), so the page never re-derives a formula.
struct ExplanationTerm {
  std::string symbol;   ///< as written in the formula, e.g. "W_dense"
  double value = 0.0;
  std::string unit;     ///< bytes, s, count, fraction, bytes/param
  std::string meaning;  ///< what the term is, in words
};

struct Explanation {
  std::string part;     ///< e.g. "/memory/stages/0/parameters_bytes", "/time/breakdown/bubble_s"
  double value = 0.0;
  std::string formula;  ///< e.g. "W_dense / g_dense + W_expert / g_expert"
  std::vector<ExplanationTerm> terms;
  std::string source;   ///< paper, Megatron-LM / TransformerEngine / PyTorch file, preset figure
};

struct Estimate {
  ModelSummary model;
  MemoryEstimate memory;
  TimeEstimate time;
  Throughput throughput;
  Timeline timeline;
  Calibration calibration;
  bool fits = true;
  std::vector<std::string> reasons;  ///< why the plan is infeasible (empty when it fits)
  std::vector<std::string> notes;    ///< assumptions worth knowing about this result
  std::vector<Explanation> explanations;  ///< memory parts of every stage, the time breakdown
};

}  // namespace trainsim
