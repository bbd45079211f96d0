// Outputs of an estimate. Breakdowns are structs whose parts add up to their
// totals; all quantities are SI (bytes, seconds, FLOP).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim {

struct ModelSummary {
  double parameters = 0.0;         ///< all parameters, embeddings included
  double active_parameters = 0.0;  ///< parameters touched by one token (top-k experts)
  int64_t padded_vocab_size = 0;
  int64_t num_moe_layers = 0;
  int64_t num_dense_layers = 0;
};

// Memory of one pipeline stage (one GPU of that stage), at its peak.
// peak_bytes = parameters + gradients + optimizer + buffers + activations + transient.
struct StageMemory {
  int64_t stage = 0;
  std::vector<int64_t> layers_per_chunk;  ///< transformer layers in each virtual chunk
  double parameters_bytes = 0.0;
  double gradients_bytes = 0.0;           ///< main-grad buffers (fp32 unless grad_reduce_in_bf16)
  double optimizer_bytes = 0.0;           ///< fp32 master weights + Adam moments, sharded per ZeRO
  double buffers_bytes = 0.0;             ///< static buffers such as TE dummy wgrad tensors
  double activations_bytes = 0.0;         ///< activations held at the peak (in-flight micro-batches)
  double transient_bytes = 0.0;           ///< working set of the op running at the peak
  double peak_bytes = 0.0;                ///< peak allocated bytes (torch max_memory_allocated)
  double reserved_bytes = 0.0;            ///< estimate of the caching allocator's reserved bytes
  double activations_per_micro_batch_bytes = 0.0;
  double dense_parameters = 0.0;          ///< parameter elements held by this GPU (non-expert)
  double expert_parameters = 0.0;         ///< routed-expert parameter elements held by this GPU
  int64_t in_flight_micro_batches = 0;    ///< micro-batches whose activations are alive at the peak
  std::string peak_op;                    ///< e.g. "layer 3 mlp.linear_fc2 (backward)"
};

struct MemoryEstimate {
  double peak_bytes = 0.0;      ///< max over stages of StageMemory::peak_bytes
  double reserved_bytes = 0.0;  ///< max over stages of StageMemory::reserved_bytes
  double capacity_bytes = 0.0;  ///< GPU HBM capacity
  int64_t peak_stage = 0;
  std::vector<StageMemory> stages;
};

struct Estimate {
  ModelSummary model;
  MemoryEstimate memory;
  bool fits = true;
  std::vector<std::string> reasons;  ///< why the plan is infeasible (empty when it fits)
  std::vector<std::string> notes;    ///< assumptions worth knowing about this result
};

}  // namespace trainsim
