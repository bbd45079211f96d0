#include "memory/outside_memory.h"

#include <algorithm>

#include "trainsim/units.h"

namespace trainsim {
namespace {

// NCCL protocol buffers per connection (src/init.cc DEFAULT_LL_BUFFSIZE,
// DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE; constants in src/include/device.h).
constexpr double kLlBytes = 8.0 * 512 * 8 * 16;        // lines x threads x steps x 16 B
constexpr double kLl128Bytes = 120.0 * 640 * 8 * 8;    // elems x threads x steps x 8 B
constexpr double kSimpleBytes = 4.0 * 1024 * 1024;     // NCCL_BUFFSIZE default 1 << 22
constexpr double kNcclSteps = 8.0;                      // NCCL_STEPS
constexpr double kP2pNvlChunkBytes = 512.0 * 1024;     // NCCL_P2P_NVL_CHUNKSIZE
constexpr double kP2pNetChunkBytes = 128.0 * 1024;     // NCCL_P2P_NET_CHUNKSIZE
constexpr double kNetChannelsPerPeer = 2.0;            // NCCL_NCHANNELS_PER_NET_PEER
// Assumed when gpu.cuda_context_mib is not given (pytorch/pytorch#109888: ~400 MB with
// lazy loading; unslothai/unsloth-zoo#1053: 426 MiB measured).
constexpr double kDefaultContextBytes = 512.0 * kMiB;

constexpr const char* kRingSource =
    "nccl src/init.cc computeBuffSizes + src/transport/p2p.cc: channels x (LL + LL128 + SIMPLE)";
constexpr const char* kP2pSource =
    "nccl src/init.cc computeBuffSizes: per peer, channels x P2P chunk x NCCL_STEPS";
constexpr const char* kNvlsSource = "system nvls_buffer_mib (nccl src/transport/nvls.cc)";

struct Group {
  const char* name;
  int64_t size;
  int64_t stride;  ///< distance between consecutive members in the global rank order
};

class Terms {
 public:
  explicit Terms(const Config& config) : config_(config) {}

  void add(std::string name, double bytes, const char* source) {
    if (bytes > 0.0) out_.terms.push_back({std::move(name), bytes, source});
  }

  bool intra_node(const Group& g) const {
    return g.size * g.stride <= config_.system.gpus_per_node;
  }

  // A communicator running ring collectives (all-gather, reduce-scatter, all-reduce).
  void collective(const Group& g) {
    if (g.size <= 1) return;
    const double channels = static_cast<double>(config_.system.nccl_channels);
    add(std::string("nccl_") + g.name, channels * (kLlBytes + kLl128Bytes + kSimpleBytes), kRingSource);
    if (config_.training.nccl_nvls && config_.system.nvls_buffer_bytes > 0.0 && intra_node(g) &&
        g.size > 2) {
      add(std::string("nccl_") + g.name + "_nvls", config_.system.nvls_buffer_bytes, kNvlsSource);
    }
  }

  // A communicator sending to `peers` ranks point to point.
  void point_to_point(const Group& g, int64_t peers) {
    if (g.size <= 1 || peers <= 0) return;
    const bool nvlink = intra_node(g);
    const double per_peer = nvlink ? static_cast<double>(config_.system.nccl_channels) * kP2pNvlChunkBytes
                                   : kNetChannelsPerPeer * kP2pNetChunkBytes;
    add(std::string("nccl_") + g.name + "_p2p", static_cast<double>(peers) * per_peer * kNcclSteps,
        kP2pSource);
  }

  OutsideMemory finish() {
    std::stable_sort(out_.terms.begin(), out_.terms.end(),
                     [](const OutsideTerm& a, const OutsideTerm& b) { return a.bytes > b.bytes; });
    for (const OutsideTerm& t : out_.terms) out_.total_bytes += t.bytes;
    return std::move(out_);
  }

 private:
  const Config& config_;
  OutsideMemory out_;
};

}  // namespace

double usable_capacity_bytes(const GpuSpec& gpu) {
  return gpu.usable_memory_bytes > 0.0 ? gpu.usable_memory_bytes : gpu.hbm_capacity_bytes;
}

OutsideMemory outside_allocator_memory(const Config& config, int64_t stage) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  Terms terms(config);
  const double context = config.system.gpu.cuda_context_bytes;
  terms.add("cuda_context", context >= 0.0 ? context : kDefaultContextBytes,
            context >= 0.0 ? "system gpu.cuda_context_mib"
                           : "assumed 512 MiB (pytorch/pytorch#109888: ~400 MB with lazy loading)");
  // Megatron's rank order tp, cp, dp, pp (megatron/core/parallel_state.py,
  // RankGenerator order "tp-cp-ep-dp-pp"); experts etp, ep, expert-dp, pp.
  terms.collective({"tp", p.tp, 1});
  if (p.cp > 1) {
    const Group cp{"cp", p.cp, p.tp};
    if (p.cp_comm_type == CpCommType::kAllGather) {
      terms.collective(cp);
    } else if (p.cp_comm_type == CpCommType::kRing) {
      terms.point_to_point(cp, std::min<int64_t>(2, p.cp - 1));
    } else {
      terms.point_to_point(cp, p.cp - 1);
    }
  }
  terms.collective({"dp", p.dp * p.cp, p.tp});  // gradients and parameters (dp-cp group)
  const bool moe = config.model.moe.has_value();
  if (moe && p.ep > 1) terms.point_to_point({"ep", p.ep, p.etp}, p.ep - 1);
  if (moe && p.etp > 1) terms.collective({"etp", p.etp, 1});
  if (moe) {
    const int64_t expert_dp = (p.tp * p.cp * p.dp) / std::max<int64_t>(p.ep * p.etp, 1);
    if (p.ep * p.etp > 1) terms.collective({"expert_dp", expert_dp, p.ep * p.etp});
  }
  if (p.pp > 1) {
    const Group pp{"pp", p.pp, p.tp * p.cp * p.dp};
    const bool end = stage == 0 || stage == p.pp - 1;
    terms.point_to_point(pp, p.vpp > 1 || !end ? 2 : 1);
    // Tied embeddings: the first and last stages all-reduce the embedding gradient
    // (megatron/core/distributed/finalize_model_grads.py, _allreduce_word_embedding_grads).
    if (config.model.tie_embeddings && end) terms.collective({"embedding", 2, pp.stride * (p.pp - 1)});
  }
  if (t.overlap.tp_comm && p.tp > 1) {
    const double rows = static_cast<double>(t.seq_len / p.cp) * static_cast<double>(t.micro_batch_size);
    const double width = static_cast<double>(config.model.hidden_size);
    const double bytes = t.dtype == Dtype::kFp8 ? 16.0 * rows * width : 24.0 * rows * width;
    terms.add("te_userbuffers", bytes,
              "transformer_engine/pytorch/module/base.py initialize_ub: 12 buffers of [s*b/cp, h] "
              "(8 of them fp8 under fp8)");
  }
  return terms.finish();
}

}  // namespace trainsim
