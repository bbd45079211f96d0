// Seeded random URL hashes for the decoder: a mix of real keys with odd
// values, unknown keys, broken escapes, unicode, huge values and noise.
const KEYS = ['v', 'm', 's', 'n', 'tp', 'pp', 'sp', 'cp', 'ep', 'etp', 'vpp', 'dp', 'mbs', 'gbs', 'nmb', 'seq', 'dt', 'z',
  'rc', 'rcm', 'rcn', 'rcx', 'l1', 'll', 'te', 'mcf', 'tok', 'm.hidden_size', 'm.num_layers', 'm.moe', 'm.moe.num_experts',
  'm.mla', 's.gpu.hbm_capacity_gib', 's.gpus_per_node', 'm.activation', 'x', '', '__proto__', 'constructor', 'm.__proto__'];
const VALUES = ['1', '0', '8', '-1', '1e309', 'NaN', 'Infinity', '0x10', '1.5', '', '%', '%E0%A4%A', '%00', 'true', 'null',
  'llama3-70b', 'h100-sxm-80gb', 'custom', 'full', 'selective', 'core_attn,mlp', 'bf16', '15T', '9'.repeat(40),
  '<img src=x onerror=alert(1)>', '"quoted"', 'é', '%F0%9F%98%80', '..%2F..', '&&', '==', '#', ' '];

export function randomHashes(count, seed = 20261202) {
  let state = seed >>> 0;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;  // LCG: reproducible
    return state / 2 ** 32;
  };
  const pick = (list) => list[Math.floor(next() * list.length)];
  const noise = (n) => Array.from({ length: n }, () => String.fromCharCode(32 + Math.floor(next() * 95))).join('');
  const hashes = [];
  for (let i = 0; i < count; i += 1) {
    const parts = [];
    const n = Math.floor(next() * 12);
    for (let j = 0; j < n; j += 1) {
      const r = next();
      if (r < 0.6) parts.push(`${pick(KEYS)}=${pick(VALUES)}`);
      else if (r < 0.75) parts.push(`${pick(KEYS)}=${Math.floor(next() * 1e6) - 10}`);
      else if (r < 0.85) parts.push(pick(KEYS));
      else parts.push(noise(1 + Math.floor(next() * 30)));
    }
    if (next() < 0.05) parts.push('x'.repeat(9000));
    hashes.push(`#${parts.join(next() < 0.9 ? '&' : pick([';', '&&', '=']))}`);
  }
  return hashes;
}
