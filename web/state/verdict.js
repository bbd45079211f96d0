// The verdict and the one-line plan summary, read from the core's result
// and the spec. The verdict is the core's memory.verdict (fits / tight /
// out of memory against the usable capacity, with the reserve and device
// overheads); a result without it (an older core) falls back to `fits`
// against the HBM capacity.
import { effectiveSection } from './config.js';
import { fieldByKey } from './fields.js';

export const STATUS = { fits: 'fits', tight: 'tight', out_of_memory: 'oom' };

export function verdictOf(result) {
  const memory = result.memory;
  const v = memory.verdict;
  if (v && STATUS[v.status]) {
    return {
      status: STATUS[v.status], usable: v.usable_bytes, margin: v.margin_bytes, device: v.device_bytes ?? memory.peak_bytes,
      stage: v.stage ?? memory.peak_stage, headroom: v.headroom_fraction ?? 0, reasons: v.reasons ?? [], core: true,
    };
  }
  return {
    status: result.fits ? 'fits' : 'oom', usable: memory.capacity_bytes, margin: memory.capacity_bytes - memory.peak_bytes,
    device: memory.peak_bytes, stage: memory.peak_stage, headroom: 0, reasons: result.reasons ?? [], core: false,
  };
}

// The sizes Megatron-LM derives (as the core does, validate.cpp derive_sizes):
// dp from the GPU count when not given, micro-batches per step from the
// global batch. Only called for a config the core accepted.
export function derivedSizes(spec, catalog) {
  const t = spec.training;
  const n = effectiveSection(spec, 'system', catalog).num_gpus;
  const modelParallel = (t.tp ?? 1) * (t.pp ?? 1) * (t.cp ?? 1);
  const dpAuto = t.dp === undefined;
  const dp = dpAuto ? n / modelParallel : t.dp;
  const gpus = n ?? dp * modelParallel;
  const microBatches = t.num_micro_batches ?? t.global_batch_size / ((t.micro_batch_size ?? 1) * dp);
  return { gpus, dp, dpAuto, microBatches };
}

// "64 × H100 SXM 80GB · tp8 pp4 dp auto (2) · 512 micro-batches/step"
export function planSummary(spec, catalog) {
  const t = spec.training;
  const { gpus, dp, dpAuto, microBatches } = derivedSizes(spec, catalog);
  const system = effectiveSection(spec, 'system', catalog);
  const gpuName = system.name ?? system.gpu?.name ?? spec.system.preset;
  const degrees = ['tp', 'pp', 'vpp', 'cp', 'ep', 'etp'].filter((k) => k === 'tp' || k === 'pp' || (t[k] ?? 1) !== 1)
    .map((k) => `${k}${t[k] ?? 1}`);
  degrees.push(dpAuto ? `dp auto (${dp})` : `dp${dp}`);
  if (t.zero_stage !== undefined && t.zero_stage !== fieldByKey('training', 'zero_stage')?.def) degrees.push(`ZeRO-${t.zero_stage}`);
  return {
    gpus, gpuName, dp, dpAuto, microBatches,
    text: `${gpus} × ${gpuName} · ${degrees.join(' ')} · ${microBatches} micro-batch${microBatches === 1 ? '' : 'es'}/step`,
  };
}
