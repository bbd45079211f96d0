// A system figure scaled by a factor, as a patch of the system section: the
// page's copy of core/src/search/system_scaling.cpp, for "re-search under a
// modified system" (the search then runs with these overrides).
export const FIGURES = {
  peak_flops: 'Peak FLOP/s',
  hbm_bandwidth: 'HBM bandwidth',
  hbm_capacity: 'HBM capacity',
  intra_node_bandwidth: 'Intra-node bandwidth',
  inter_node_bandwidth: 'Inter-node bandwidth',
  intra_node_latency: 'Intra-node latency',
  inter_node_latency: 'Inter-node latency',
  kernel_latency: 'Kernel latency',
};

export function figureLabel(figure) {
  return FIGURES[figure] ?? String(figure).replace(/_/g, ' ');
}

const scaled = (value, factor) => (typeof value === 'number' ? value * factor : value);

function scaleTable(table, factor) {
  if (!table || typeof table !== 'object') return table;
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [k, scaled(v, factor)]));
}

function linkBandwidth(link, factor) {
  const out = { bandwidth_gb_per_s: scaled(link.bandwidth_gb_per_s, factor) };
  for (const key of ['dp_all_gather_gb_per_s', 'dp_reduce_scatter_gb_per_s']) {
    if (link[key]) out[key] = scaleTable(link[key], factor);
  }
  return out;
}

function linkLatency(link, factor) {
  const out = { latency_us: scaled(link.latency_us, factor) };
  if (link.collectives && typeof link.collectives === 'object') {
    out.collectives = Object.fromEntries(Object.entries(link.collectives).map(([name, c]) => [name,
      c && typeof c.latency_us === 'number' ? { ...c, latency_us: c.latency_us * factor } : c]));
  }
  return out;
}

// system: the effective system section (preset merged with overrides).
// Returns the patch to merge into the config's system section.
export function scaleSystemPatch(system, figure, factor) {
  const gpu = system.gpu ?? {};
  switch (figure) {
    case 'peak_flops':
      return { gpu: { peak_tflops: scaleTable(gpu.peak_tflops, factor) } };
    case 'hbm_bandwidth':
      return { gpu: { hbm_bandwidth_gb_per_s: scaled(gpu.hbm_bandwidth_gb_per_s, factor) } };
    case 'hbm_capacity':
      return { gpu: { hbm_capacity_gib: scaled(gpu.hbm_capacity_gib, factor) } };
    case 'intra_node_bandwidth': {
      const patch = { intra_node: linkBandwidth(system.intra_node ?? {}, factor) };
      if (Array.isArray(system.intra_node_tiers)) {
        patch.intra_node_tiers = system.intra_node_tiers.map((tier) => ({ ...tier, ...linkBandwidth(tier, factor) }));
      }
      return patch;
    }
    case 'inter_node_bandwidth':
      return { inter_node: linkBandwidth(system.inter_node ?? {}, factor) };
    case 'intra_node_latency': {
      const patch = { intra_node: linkLatency(system.intra_node ?? {}, factor) };
      if (Array.isArray(system.intra_node_tiers)) {
        patch.intra_node_tiers = system.intra_node_tiers.map((tier) => ({ ...tier, ...linkLatency(tier, factor) }));
      }
      return patch;
    }
    case 'inter_node_latency':
      return { inter_node: linkLatency(system.inter_node ?? {}, factor) };
    case 'kernel_latency': {
      const efficiency = system.efficiency ?? {};
      const patch = {};
      for (const kernel of ['memory', 'permute', 'cross_entropy', 'cross_entropy_fused']) {
        if (efficiency[kernel] && typeof efficiency[kernel].latency_us === 'number') {
          patch[kernel] = { latency_us: efficiency[kernel].latency_us * factor };
        }
      }
      return { efficiency: patch };
    }
    default:
      return {};
  }
}
