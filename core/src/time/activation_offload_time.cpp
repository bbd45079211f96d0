#include "time/activation_offload_time.h"

#include <algorithm>
#include <cstddef>

namespace trainsim {

OffloadTime activation_offload_time(const std::vector<OffloadLayer>& layers, double link_bytes_per_s) {
  OffloadTime out;
  const size_t total = layers.size();
  size_t offloaded = 0;  // TE offloads layers 0 .. N-1 (DefaultOffloadSynchronizer)
  while (offloaded < total && layers[offloaded].offloaded_bytes > 0.0) ++offloaded;
  if (offloaded == 0 || link_bytes_per_s <= 0.0) return out;
  std::vector<double> copy_s(offloaded);
  for (size_t i = 0; i < offloaded; ++i) copy_s[i] = layers[i].offloaded_bytes / link_bytes_per_s;

  // Forward: fwd_step(k) starts layer k - 1's offload, then waits for the offload of layer
  // i = k - (L - N) (finish_offload_map), then layer k runs. One offload stream: copies in order.
  std::vector<double> copy_end(offloaded, 0.0);
  double now = 0.0, stream = 0.0, compute = 0.0;
  for (size_t k = 0; k < total; ++k) {
    if (k >= 1 && k - 1 < offloaded) {
      const double start = std::max(stream, now);
      stream = start + copy_s[k - 1];
      copy_end[k - 1] = stream;
      out.d2h_s += copy_s[k - 1];
    }
    if (k + offloaded >= total) now = std::max(now, copy_end[k + offloaded - total]);
    now += layers[k].forward_s;
    compute += layers[k].forward_s;
  }
  out.forward_exposed_s = now - compute;

  // Backward, layers L-1 .. 0: bwd_step(k) starts the reload of layer i = k + 1 + N - L
  // (start_reload_map), the backward of an offloaded layer waits for its reload.
  std::vector<double> reload_end(offloaded, 0.0);
  now = 0.0;
  stream = 0.0;
  compute = 0.0;
  for (size_t step = 0; step < total; ++step) {
    const size_t k = total - 1 - step;
    if (k + 1 + offloaded >= total && k + 1 + offloaded - total < offloaded) {
      const size_t i = k + 1 + offloaded - total;
      const double start = std::max(stream, now);
      stream = start + copy_s[i];
      reload_end[i] = stream;
      out.h2d_s += copy_s[i];
    }
    if (k < offloaded) now = std::max(now, reload_end[k]);
    now += layers[k].backward_s;
    compute += layers[k].backward_s;
  }
  out.backward_exposed_s = now - compute;
  return out;
}

std::vector<OffloadLayer> offload_layers(const ModelPlan& plan, const ChunkPlan& chunk,
                                         const std::vector<ChunkTime>& per_block) {
  std::vector<OffloadLayer> layers;
  layers.reserve(static_cast<size_t>(chunk.num_layers));
  for (const BlockRun& run : chunk.runs) {
    const Block& block = *plan.blocks[static_cast<size_t>(run.block)];
    if (block.num_layers <= 0) continue;  // embedding, head
    const ChunkTime& t = per_block[static_cast<size_t>(run.block)];
    const double n = static_cast<double>(block.num_layers);
    const OffloadLayer layer{t.forward_phase_s() / n, t.backward_phase_s() / n, block.offloaded_bytes / n};
    for (int64_t r = 0; r < run.repeat * block.num_layers; ++r) layers.push_back(layer);
  }
  return layers;
}

OffloadTime chunk_offload_time(const Config& config, const ModelPlan& plan, const ChunkPlan& chunk,
                               const std::vector<ChunkTime>& per_block) {
  if (config.training.activation_offload_layers <= 0) return {};
  const HostMemorySpec& host = config.system.host;
  return activation_offload_time(offload_layers(plan, chunk, per_block),
                                 host.link_bandwidth_bytes_per_s * host.link_efficiency);
}

}  // namespace trainsim
