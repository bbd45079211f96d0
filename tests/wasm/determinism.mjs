// Native vs WASM determinism (issue 7): the same config gives the same
// envelope from the native CLI and from the WASM module, and the module gives
// the same text twice. Configs: every model preset on every system preset under
// three strategies (dense, GQA, MLA, MoE; tp/pp/vpp/cp/ep/sp, recompute, ZeRO,
// dtypes) plus bad inputs, whose error envelopes must agree too.
// Numbers must be bit-identical or within 1e-12 relative (libm may round the
// last bit differently); the report says how many envelopes were identical.
//   node tests/wasm/determinism.mjs MODULE.mjs TRAINSIM_CLI
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modulePath, cliPath] = process.argv.slice(2);
if (!modulePath || !cliPath) {
  console.error('usage: node determinism.mjs MODULE.mjs TRAINSIM_CLI');
  process.exit(1);
}
const kRel = 1e-12;

// First difference beyond kRel, or ''. maxRel collects the largest relative gap seen.
function compare(a, b, where, stats) {
  if (typeof a === 'number' && typeof b === 'number') {
    if (a === b) return '';
    const rel = Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
    stats.maxRel = Math.max(stats.maxRel, rel);
    return rel > kRel ? `${where || '/'}: ${a} != ${b} (relative ${rel.toExponential(2)})` : '';
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return `${where || '/'}: arrays differ`;
    for (let i = 0; i < a.length; i += 1) {
      const d = compare(a[i], b[i], `${where}/${i}`, stats);
      if (d) return d;
    }
    return '';
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (!(key in a) || !(key in b)) return `${where}/${key}: present on one side only`;
      const d = compare(a[key], b[key], `${where}/${key}`, stats);
      if (d) return d;
    }
    return '';
  }
  return a === b ? '' : `${where || '/'}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`;
}

function largest(candidates, ok) {
  const good = candidates.filter(ok);
  return good.length ? Math.max(...good) : 1;
}

// Three strategies valid for a model by construction (as tests/fuzz/make_seeds.py).
function strategies(model) {
  const heads = model.num_attention_heads;
  const kv = model.num_kv_heads ?? heads;
  const mla = 'mla' in model;
  const moe = model.moe;
  const widths = [model.ffn_hidden_size];
  if (moe && moe.shared_expert_ffn_hidden_size > 0) widths.push(moe.shared_expert_ffn_hidden_size);
  const tp = largest([1, 2, 4, 8], (t) => heads % t === 0 && (mla || kv % t === 0) && widths.every((w) => w % t === 0));
  const pp = largest([1, 2, 4], (p) => model.num_layers % p === 0);
  const ep = (group) => largest([1, 2, 4, 8, 16, 32, 64], (e) => moe && moe.num_experts % e === 0 && group % e === 0);
  const out = [[{ seq_len: 2048, micro_batch_size: 1, global_batch_size: 8 }, 1]];
  const second = {
    seq_len: 4096, micro_batch_size: 1, global_batch_size: 16, tp, pp, dp: 2, sequence_parallel: tp > 1, zero_stage: 1,
    recompute: { granularity: 'full', method: 'block', num_layers: 1 },
  };
  if (moe) second.ep = ep(tp * 2);
  out.push([second, tp * pp * 2]);
  const vpp = pp > 1 && model.num_layers % (pp * 2) === 0 ? 2 : 1;
  const a2a = heads % (tp * 2) === 0 && (mla || kv % (tp * 2) === 0);
  const third = {
    seq_len: 8192, micro_batch_size: 2, num_micro_batches: 2 * pp, tp, pp, vpp, cp: 2, dp: 4, sequence_parallel: tp > 1,
    zero_stage: 3, dtype: 'fp8', cp_comm_type: a2a ? 'a2a' : 'p2p', recompute: { granularity: 'selective', modules: ['core_attn'] },
  };
  if (moe) Object.assign(third, { ep: ep(tp * 8), moe_pad_to_capacity: true, moe_capacity_factor: 1.25 });
  out.push([third, tp * pp * 8]);
  return out;
}

const { default: createTrainsim } = await import(pathToFileURL(path.resolve(modulePath)).href);
const m = await createTrainsim();
const listing = JSON.parse(m.call('presets', '')).result;
const configs = [];
for (const { id: modelId } of listing.models) {
  const model = JSON.parse(m.call('preset', modelId)).result.model;
  listing.systems.forEach(({ id: systemId }, i) => {
    strategies(model).forEach(([training, gpus], j) => {
      if ((i + j) % 2 === 0) configs.push({ model: modelId, training, system: { preset: systemId, num_gpus: gpus } });
    });
  });
}
const bad = [
  '', '{', '[]', '{"model": "llama3-8b"}', '{"model": "llama3-8b", "training": {"seq_len": 1e400}}',
  JSON.stringify({ ...configs[0], training: { ...configs[0].training, tp: 3 } }),
  JSON.stringify({ ...configs[0], system: { preset: 'h100-sxm-80gb', num_gpus: 8, bogus: 1 } }),
];
const texts = [...configs.map((c) => JSON.stringify(c)), ...bad];

let identical = 0;
let ok = 0;
const failures = [];
const stats = { maxRel: 0 };
const started = performance.now();
for (const text of texts) {
  const wasm = m.call('estimate', text);
  if (m.call('estimate', text) !== wasm) failures.push(`WASM output differs between two runs: ${text.slice(0, 200)}`);
  let native;
  try {
    native = execFileSync(cliPath, ['estimate', '-'], { input: text, maxBuffer: 1 << 30 }).toString().trim();
  } catch (error) {  // exit code 2 (bad input) still prints the envelope
    native = String(error.stdout ?? '').trim();
  }
  if (native === wasm) {
    identical += 1;
  } else {
    const d = compare(JSON.parse(native), JSON.parse(wasm), '', stats);
    if (d) failures.push(`${text.slice(0, 160)}\n    native vs WASM: ${d}`);
  }
  if (JSON.parse(wasm).ok) ok += 1;
}
console.log(`# ${texts.length} configs (${ok} estimated, ${texts.length - ok} errors) in ${(performance.now() - started).toFixed(0)} ms: ` +
  `${identical} byte-identical, largest relative difference ${stats.maxRel.toExponential(2)}`);
for (const f of failures) console.log(`not ok - ${f}`);
console.log(failures.length === 0 ? 'ok - native and WASM estimates agree' : `${failures.length} failed`);
process.exit(failures.length === 0 ? 0 : 1);
