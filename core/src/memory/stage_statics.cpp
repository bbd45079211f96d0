#include "memory/stage_statics.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string_view>
#include <utility>

#include "memory/static_memory.h"
#include "model/output_wgrad_deferral.h"
#include "model/shard_groups.h"
#include "trainsim/units.h"

namespace trainsim {
namespace {

// One module's parameters on this GPU (elements, and bytes of its weights).
struct ParamTensor {
  double dense = 0.0;
  double expert = 0.0;
  double weight_bytes = 0.0;
};

// Parameters in Megatron's buffer order: _ParamAndGradBuffer walks the
// parameters in reverse so the buffer follows the backward pass.
std::vector<ParamTensor> reversed_params(const ModelPlan& plan, size_t stage) {
  std::vector<ParamTensor> params;
  for (const ChunkPlan& chunk : plan.stages[stage]) {
    for (const BlockRun& run : chunk.runs) {
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      for (int64_t r = 0; r < run.repeat; ++r) {
        for (const Op& op : block.ops) {
          if (op.dense_params <= 0.0 && op.expert_params <= 0.0) continue;
          params.push_back({op.dense_params, op.expert_params,
                            (op.dense_params + op.expert_params) * op.weight_bytes_per_param});
        }
      }
    }
  }
  std::reverse(params.begin(), params.end());
  return params;
}

// This rank's shard of a buffer of `total` elements cut at parameter
// boundaries: the distributed optimizer gives DP rank 0 the first
// total / group elements (distrib_optimizer.py, _build_model_gbuf_range).
std::vector<double> shard_pieces(const std::vector<ParamTensor>& params, bool expert,
                                 double total, double group) {
  std::vector<double> pieces;
  double left = total / group;
  for (const ParamTensor& p : params) {
    const double n = expert ? p.expert : p.dense;
    if (n <= 0.0) continue;
    if (left <= 0.0) break;
    pieces.push_back(std::min(n, left));
    left -= n;
  }
  return pieces;
}

// cuBLAS workspaces kept from the first GEMM on (see the header).
void add_workspaces(const Config& config, const ModelPlan& plan, size_t stage, StageStatics& s) {
  const double cc = config.system.gpu.compute_capability;
  const bool hopper_or_newer = cc <= 0.0 || cc >= 9.0;  // unknown: as Hopper (the larger figure)
  const double te_bytes = hopper_or_newer ? 32.0 * kMiB + 1024.0 : 4.0 * kMiB;
  bool grouped = false, torch_gemm = false, head = false;
  for (const ChunkPlan& chunk : plan.stages[stage]) {
    for (const BlockRun& run : chunk.runs) {
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      for (const Op& op : block.ops) {
        grouped = grouped || op.kind == OpKind::kGroupedLinear;
        torch_gemm = torch_gemm || op.kind == OpKind::kRouter;
        head = head || op.kind == OpKind::kCrossEntropy;
      }
    }
  }
  torch_gemm = torch_gemm || head;  // the output layer runs torch.matmul
  s.first_forward.push_back({"te_cublas_workspace", te_bytes});
  if (config.training.overlap.tp_comm && config.training.parallel.tp > 1) {
    s.first_forward.push_back({"te_cublas_workspace_userbuffers", 3.0 * te_bytes});
  }
  if (grouped) {
    for (int i = 0; i < 4; ++i) s.first_forward.push_back({"te_cublas_workspace_grouped", te_bytes});
  }
  if (torch_gemm) {
    const bool sm90 = cc <= 0.0 || (cc >= 9.0 && cc < 9.05);
    s.first_forward.push_back({"torch_cublas_workspace", sm90 ? 32.0 * kMiB : 8.125 * kMiB});
    s.first_forward.push_back({"torch_cublaslt_workspace", 1.0 * kMiB});
  }
  const ParallelSpec& p = config.training.parallel;
  if (head && p.sequence_parallel && p.tp > 1) {
    const double tokens = static_cast<double>(config.training.micro_batch_size) *
                          static_cast<double>(config.training.seq_len / p.cp);
    s.first_forward.push_back(
        {"output_layer_gather_buffer", tokens * static_cast<double>(config.model.hidden_size) * 2.0});
  }
  for (const TraceTensor& t : s.first_forward) s.workspace_bytes += t.bytes;
}

// Megatron-FSDP unit buffers (ZeRO 2 and 3, sharded over a group > 1). Its units are
// the transformer layers (megatron/core/distributed/fsdp/mcore_fsdp_adapter.py:
// fsdp_unit_modules); the embedding and the output layer have buckets of their own.
// Each model chunk has its own buffers; per chunk, in pass order
// (megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py):
// - ZeRO 3 gathers a unit's parameters before its forward and its backward and frees
//   them after; it prefetches the next buckets while what it prefetched is below the
//   prefetch size (AllGatherPipeline.all_gather_params, suggested_AG_prefetch_size);
// - gradients are produced unsharded; when a unit's are complete, the queue of pending
//   reduce-scatters is drained, oldest first, down to the queue capacity, then the unit
//   joins it, and the next unit's gradients are produced meanwhile
//   (GradReducePipeline.reduce_gradients, wait_for_previous_grad_reduce). A chunk's queue
//   is drained only by its own next unit, so after its backward its queue stays while the
//   stage's other chunks run theirs.
// Queue capacity: --suggested-communication-unit-size, unset twice the chunk's average unit
// with ZeRO 3 (1e9 elements with ZeRO 2), and at least 1e9; the prefetch size is half of
// it, rounded down (megatron_fsdp.py, MegatronFSDP.__init__; 0: no prefetch).
// --fsdp-double-buffer: each chunk's layers take their gathered parameters and gradients
// from a fixed pool of two buffers each (FixedPoolAllocator, size 2; prefetch stops at two
// units, need_skip_prefetch), kept for the run; the embedding and output buckets are
// allocated beside the pools.
namespace fsdp {

struct Unit {
  double params = 0.0;        ///< elements on this GPU
  double weight_bytes = 0.0;  ///< gathered (unsharded) bytes
  bool layer = false;         ///< a transformer layer (a unit of the fixed pool)
};

// Units of each chunk of the stage, in forward order.
std::vector<std::vector<Unit>> chunk_units(const ModelPlan& plan, size_t stage) {
  std::vector<std::vector<Unit>> out;
  for (const ChunkPlan& chunk : plan.stages[stage]) {
    out.emplace_back();
    for (const BlockRun& run : chunk.runs) {
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      const int64_t layers = std::max<int64_t>(1, block.num_layers);
      Unit unit;
      unit.layer = block.num_layers > 0;
      for (const Op& op : block.ops) {
        unit.params += (op.dense_params + op.expert_params) / static_cast<double>(layers);
        unit.weight_bytes += (op.dense_params + op.expert_params) * op.weight_bytes_per_param /
                             static_cast<double>(layers);
      }
      if (unit.params <= 0.0) continue;
      out.back().insert(out.back().end(), static_cast<size_t>(run.repeat * layers), unit);
    }
  }
  return out;
}

// Gathered bytes at the busiest moment of one pass over `units` (either direction): a
// unit and the following ones prefetched until they reach `prefetch` elements.
double gathered_peak_bytes(const std::vector<Unit>& units, double prefetch) {
  double peak = 0.0;
  for (const bool reverse : {false, true}) {
    const size_t n = units.size();
    const auto at = [&](size_t i) -> const Unit& { return units[reverse ? n - 1 - i : i]; };
    size_t end = 0;  // one past the window's last unit
    double ahead = 0.0, bytes = 0.0;  // elements prefetched beyond unit i; the window's bytes
    for (size_t i = 0; i < n; ++i) {
      if (end <= i) end = i + 1, ahead = 0.0, bytes = at(i).weight_bytes;
      while (end < n && ahead < prefetch) ahead += at(end).params, bytes += at(end).weight_bytes, ++end;
      peak = std::max(peak, bytes);
      bytes -= at(i).weight_bytes;
      if (i + 1 < end) ahead -= at(i + 1).params;
    }
  }
  return peak;
}

struct GradQueue {
  double peak = 0.0;      ///< elements: the queue, the completed unit and the next one
  double residual = 0.0;  ///< elements still queued after the chunk's backward
};

// Unsharded gradient elements along two backward passes over `units` (the queue a pass
// leaves is drained by the chunk's next backward, with the next micro-batch), at most
// every unit's once: a queued unit produced again reuses its bucket.
GradQueue grad_queue(const std::vector<Unit>& units, double capacity) {
  GradQueue q;
  const size_t n = units.size();
  if (n == 0) return q;
  double total = 0.0;
  for (const Unit& u : units) total += u.params;
  std::deque<double> queue;
  double queued = 0.0;
  for (size_t pass = 0; pass < 2; ++pass) {
    for (size_t k = 0; k < n; ++k) {
      const double done = units[n - 1 - k].params;
      while (!queue.empty() && queued > capacity) queued -= queue.front(), queue.pop_front();
      const double next = k + 1 < n ? units[n - 2 - k].params : 0.0;
      q.peak = std::max(q.peak, std::min(total, queued + done + next));
      queue.push_back(done);
      queued += done;
    }
    if (pass == 0) q.residual = std::min(total, queued);
  }
  return q;
}

}  // namespace fsdp

void add_fsdp_buffers(const Config& config, const ModelPlan& plan, size_t stage, StageStatics& s) {
  const TrainingSpec& t = config.training;
  if (t.zero_stage < 2) return;
  if (dense_shard_group(t.parallel) <= 1.0 && expert_shard_group(t.parallel) <= 1.0) return;
  const double grad_bytes_per_element = t.grad_reduce_in_bf16 ? 2.0 : 4.0;
  const std::vector<std::vector<fsdp::Unit>> chunks = fsdp::chunk_units(plan, stage);
  double gathered = 0.0, grads = 0.0;
  if (t.fsdp_double_buffer) {
    double layer_bytes = 0.0, layer_params = 0.0, other_bytes = 0.0, other_params = 0.0;
    for (const auto& units : chunks) {
      double chunk_bytes = 0.0, chunk_params = 0.0;
      for (const fsdp::Unit& u : units) {
        if (u.layer) {
          chunk_bytes = std::max(chunk_bytes, u.weight_bytes), chunk_params = std::max(chunk_params, u.params);
        } else {
          other_bytes = std::max(other_bytes, u.weight_bytes), other_params = std::max(other_params, u.params);
        }
      }
      layer_bytes += 2.0 * chunk_bytes, layer_params += 2.0 * chunk_params;
    }
    gathered = layer_bytes + other_bytes;
    grads = (layer_params + other_params) * grad_bytes_per_element;
  } else {
    std::vector<fsdp::GradQueue> queues;
    double residuals = 0.0;
    for (const auto& units : chunks) {
      double capacity = static_cast<double>(t.fsdp_communication_unit_elements);
      if (capacity <= 0.0) {
        double layers = 0.0, layer_params = 0.0;
        for (const fsdp::Unit& u : units) layers += u.layer ? 1.0 : 0.0, layer_params += u.layer ? u.params : 0.0;
        capacity = t.zero_stage >= 3 && layers > 0.0 ? std::max(1e9, 2.0 * layer_params / layers) : 1e9;
      }
      gathered = std::max(gathered, fsdp::gathered_peak_bytes(units, std::floor(capacity / 2.0)));
      queues.push_back(fsdp::grad_queue(units, capacity));
      residuals += queues.back().residual;
    }
    for (const fsdp::GradQueue& q : queues) {
      grads = std::max(grads, (q.peak + residuals - q.residual) * grad_bytes_per_element);
    }
  }
  if (t.zero_stage >= 3) {
    s.first_forward.push_back({"fsdp_gathered_units", gathered});
    s.workspace_bytes += gathered;
  }
  s.first_backward.push_back({"fsdp_unsharded_unit_grads", grads});
  s.buffers_bytes += grads;
}

// --defer-embedding-wgrad-compute (model/output_wgrad_deferral.h): until the flush the
// stage holding the output layer keeps, for each deferred micro-batch, the layer's input
// (embedding_activation_buffer: the local rows, before the sequence-parallel gather) and
// its logits gradient (grad_output_buffer: the gathered rows x vocab / tp, bf16). They
// are counted from the first backward on: the buffers fill in the steady phase, beside
// the activations it keeps in flight.
void add_deferred_wgrad_buffers(const Config& config, const ModelPlan& plan, size_t stage, StageStatics& s) {
  const int64_t deferred = deferred_wgrad_micro_batches(config.training);
  if (deferred == 0) return;
  const ParallelSpec& p = config.training.parallel;
  const double gather = p.sequence_parallel && p.tp > 1 ? static_cast<double>(p.tp) : 1.0;
  double input_bytes = 0.0, grad_bytes = 0.0;
  for (const ChunkPlan& chunk : plan.stages[stage]) {
    for (const BlockRun& run : chunk.runs) {
      for (const Op& op : plan.blocks[static_cast<size_t>(run.block)]->ops) {
        if (std::string_view(op.name) != "output_layer") continue;
        const double rows = static_cast<double>(op.gemm.b) * static_cast<double>(op.gemm.m);
        input_bytes += static_cast<double>(run.repeat) * rows / gather * static_cast<double>(op.gemm.k) * 2.0;
        grad_bytes += static_cast<double>(run.repeat) * rows * static_cast<double>(op.gemm.n) * 2.0;
      }
    }
  }
  if (grad_bytes <= 0.0) return;
  const double n = static_cast<double>(deferred);
  s.first_backward.push_back({"deferred_output_layer_inputs", n * input_bytes});
  s.first_backward.push_back({"deferred_logits_grads", n * grad_bytes});
  s.buffers_bytes += n * (input_bytes + grad_bytes);
}

}  // namespace

StageStatics stage_statics(const Config& config, const ModelPlan& plan, size_t stage, bool pieces) {
  StageStatics s;
  const TrainingSpec& t = config.training;
  RankParams params;
  double weight_bytes_dense = 0.0, weight_bytes_expert = 0.0;
  std::vector<std::pair<int64_t, int64_t>> wgrad_shapes;
  for (const ChunkPlan& chunk : plan.stages[stage]) {
    for (const BlockRun& run : chunk.runs) {
      const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
      const double repeat = static_cast<double>(run.repeat);
      for (const Op& op : block.ops) {
        params.dense += repeat * op.dense_params;
        params.expert += repeat * op.expert_params;
        weight_bytes_dense += repeat * op.dense_params * op.weight_bytes_per_param;
        weight_bytes_expert += repeat * op.expert_params * op.weight_bytes_per_param;
        if (op.wgrad_rows > 0) wgrad_shapes.emplace_back(op.wgrad_rows, op.wgrad_cols);
      }
    }
  }
  const StaticMemory fixed = static_memory(t, params, weight_bytes_dense, weight_bytes_expert);
  s.dense_parameters = params.dense;
  s.expert_parameters = params.expert;
  s.dense_weight_bytes = weight_bytes_dense;
  s.expert_weight_bytes = weight_bytes_expert;
  s.parameters_bytes = fixed.parameters_bytes;
  s.gradients_bytes = fixed.gradients_bytes;
  s.optimizer_bytes = fixed.optimizer_bytes;
  s.host_bytes = fixed.host_bytes;
  // TE keeps one bf16 dummy wgrad tensor per distinct weight shape when
  // gradient-accumulation fusion writes into main_grad (TE >= 2.3).
  std::sort(wgrad_shapes.begin(), wgrad_shapes.end());
  wgrad_shapes.erase(std::unique(wgrad_shapes.begin(), wgrad_shapes.end()), wgrad_shapes.end());
  for (const auto& [rows, cols] : wgrad_shapes) {
    const double bytes = 2.0 * static_cast<double>(rows) * static_cast<double>(cols);
    s.buffers_bytes += bytes;
    s.first_backward.push_back({"te_dummy_wgrad", bytes});
  }
  add_workspaces(config, plan, stage, s);
  add_fsdp_buffers(config, plan, stage, s);
  add_deferred_wgrad_buffers(config, plan, stage, s);

  const bool dense_expert_split = params.expert > 0.0;
  // Parameters: one contiguous buffer with the distributed optimizer, else
  // the modules' own tensors.
  const std::vector<ParamTensor> order = pieces ? reversed_params(plan, stage) : std::vector<ParamTensor>{};
  const double weight_total = weight_bytes_dense + weight_bytes_expert;
  const double param_scale = weight_total > 0.0 ? s.parameters_bytes / weight_total : 0.0;
  if (t.zero_stage >= 1 || !pieces) {
    const double dense_share = weight_total > 0.0 ? weight_bytes_dense / weight_total : 1.0;
    s.setup.push_back({"param_buffer", s.parameters_bytes * dense_share});
    if (dense_expert_split) s.setup.push_back({"expert_param_buffer", s.parameters_bytes * (1.0 - dense_share)});
  } else {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      s.setup.push_back({"parameter", it->weight_bytes * param_scale});
    }
  }
  // Main gradients: one contiguous buffer (dense and expert apart).
  const double grad_total = params.dense + params.expert;
  const double dense_grad_share = grad_total > 0.0 ? params.dense / grad_total : 1.0;
  s.setup.push_back({"grad_buffer", s.gradients_bytes * dense_grad_share});
  if (dense_expert_split) s.setup.push_back({"expert_grad_buffer", s.gradients_bytes * (1.0 - dense_grad_share)});
  // fp32 master shards now, Adam moments at the first step: a third each of
  // the optimizer bytes (12 B per parameter: 4 master + 4 + 4 moments).
  std::vector<double> shard;
  if (pieces) {
    const ParallelSpec& p = t.parallel;
    const bool sharded = t.zero_stage >= 1;
    shard = shard_pieces(order, false, params.dense, sharded ? dense_shard_group(p) : 1.0);
    const std::vector<double> expert =
        shard_pieces(order, true, params.expert, sharded ? expert_shard_group(p) : 1.0);
    shard.insert(shard.end(), expert.begin(), expert.end());
  }
  double shard_total = 0.0;
  for (const double n : shard) shard_total += n;
  const double third = s.optimizer_bytes / 3.0;
  if (shard.empty() || shard_total <= 0.0) shard = {1.0}, shard_total = 1.0;
  for (const double n : shard) s.setup.push_back({"fp32_master_shard", third * n / shard_total});
  for (const double n : shard) {
    s.optimizer_state.push_back({"adam_exp_avg", third * n / shard_total});
    s.optimizer_state.push_back({"adam_exp_avg_sq", third * n / shard_total});
  }
  return s;
}

}  // namespace trainsim
