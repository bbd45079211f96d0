// Device memory a training process uses outside PyTorch's caching allocator,
// per pipeline stage, each term with its source:
//
//  cuda_context     the CUDA context and loaded kernel modules: the system's
//                   gpu.cuda_context_mib (pytorch/pytorch#107667 and #109888: about
//                   300-400 MB with lazy module loading, CUDA >= 11.7)
//  nccl_<group>     NCCL's buffers of each communicator the plan uses (PyTorch
//                   creates a communicator at a group's first collective and NCCL >=
//                   2.22 connects peers lazily, so only groups that communicate count):
//                   - ring collectives: channels x one receive connection of
//                     LL 512 KiB + LL128 4,915,200 B + SIMPLE 4 MiB (NCCL_BUFFSIZE)
//                     (nccl src/init.cc computeBuffSizes; src/transport/p2p.cc
//                     p2pRecvSetup allocates the three per connection)
//                   - point-to-point peers (pipeline send/recv, all-to-all): channels
//                     per peer x P2P chunk x NCCL_STEPS (8): 512 KiB chunks over NVLink,
//                     128 KiB over the network (init.cc computeBuffSizes), channels per
//                     peer: the collective channels over NVLink (nvidia/nccl#892 log:
//                     16 coll channels, 16 p2p channels per peer on 8 H800), 2 over the
//                     network (NCCL_NCHANNELS_PER_NET_PEER)
//                   - NVLS (NVLink SHARP, when the system has it and training.nccl_nvls):
//                     per intra-node collective communicator of more than 2 GPUs, the
//                     system's nvls_buffer_mib (NCCL src/transport/nvls.cc: UC and
//                     multicast buffers aligned to the multicast granularity; measured
//                     about 1.3 GiB per communicator on H100, openxla/xla#9845)
//  te_userbuffers   Transformer Engine's userbuffers for tp_comm_overlap
//                   (megatron/training/initialize.py _initialize_tp_communicators:
//                   shape [seq * micro_batch / cp, hidden]; transformer_engine/pytorch/
//                   module/base.py initialize_ub: 12 GEMM buffers, bf16, or 8 of them
//                   1-byte under fp8; allocated by userbuffers-host.cpp with cuMemCreate /
//                   cudaMalloc, outside PyTorch)
#pragma once

#include <string>
#include <vector>

#include "trainsim/spec.h"

namespace trainsim {

struct OutsideTerm {
  std::string name;
  double bytes = 0.0;
  const char* source = "";
};

// The terms on a GPU of `stage`, largest first, and whether a figure had to be
// assumed (notes name it).
struct OutsideMemory {
  std::vector<OutsideTerm> terms;
  double total_bytes = 0.0;
};

OutsideMemory outside_allocator_memory(const Config& config, int64_t stage);

// The figure the verdict checks against: gpu.usable_memory_mib, else the HBM capacity.
double usable_capacity_bytes(const GpuSpec& gpu);

}  // namespace trainsim
