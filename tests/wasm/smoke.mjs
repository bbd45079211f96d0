// Node smoke test of the WASM module: Module.call(op, input) answers with
// envelopes, bad input and unknown ops come back as data, the schema op
// describes the config, and one config gives the same numbers as
// the native CLI.
//   node tests/wasm/smoke.mjs MODULE.mjs [CONFIG.json CLI_OUTPUT.json]
// CLI_OUTPUT.json is `trainsim estimate CONFIG.json` of the native build.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modulePath, configPath, cliOutputPath] = process.argv.slice(2);
if (!modulePath) {
  console.error('usage: node smoke.mjs MODULE.mjs [CONFIG.json CLI_OUTPUT.json]');
  process.exit(1);
}

let passed = 0;
let failed = 0;
function check(name, fn) {
  try {
    fn();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}\n  ${String(error.message).split('\n').join('\n  ')}`);
  }
}
function assert(condition, message) {
  if (!condition) throw new Error(message);
}

// Deep comparison; numbers agree to a relative 1e-9 (libm may differ in the
// last bits between the native and the WASM build).
export function sameJson(a, b, where = '') {
  if (typeof a === 'number' && typeof b === 'number') {
    const scale = Math.max(Math.abs(a), Math.abs(b), 1e-300);
    if (a !== b && Math.abs(a - b) / scale > 1e-9) return `${where || '/'}: ${a} != ${b}`;
    return '';
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return `${where || '/'}: arrays differ`;
    for (let i = 0; i < a.length; i += 1) {
      const d = sameJson(a[i], b[i], `${where}/${i}`);
      if (d) return d;
    }
    return '';
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (!(key in a) || !(key in b)) return `${where}/${key}: present on one side only`;
      const d = sameJson(a[key], b[key], `${where}/${key}`);
      if (d) return d;
    }
    return '';
  }
  return a === b ? '' : `${where || '/'}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`;
}

const { default: createTrainsim } = await import(pathToFileURL(path.resolve(modulePath)).href);
const started = performance.now();
const m = await createTrainsim();
console.log(`# module instantiated in ${(performance.now() - started).toFixed(0)} ms`);

let listing;
check('version() is a version string', () => {
  assert(/^\d+\.\d+\.\d+/.test(m.version()), `got ${JSON.stringify(m.version())}`);
});
check('presets lists models and systems', () => {
  listing = JSON.parse(m.call('presets', ''));
  assert(listing.schema_version === 1 && listing.ok === true, `bad envelope ${JSON.stringify(listing).slice(0, 200)}`);
  for (const kind of ['models', 'systems']) {
    assert(Array.isArray(listing.result[kind]) && listing.result[kind].length > 0, `no ${kind}`);
    for (const p of listing.result[kind]) assert(typeof p.id === 'string' && typeof p.label === 'string', `bad entry ${JSON.stringify(p)}`);
  }
});
check('preset returns the preset document', () => {
  const id = listing.result.models[0].id;
  const envelope = JSON.parse(m.call('preset', id));
  assert(envelope.ok && envelope.result.id === id && typeof envelope.result.model === 'object', JSON.stringify(envelope).slice(0, 200));
  const missing = JSON.parse(m.call('preset', 'no-such-preset'));
  assert(missing.ok === false && missing.errors.length > 0, 'unknown preset id should be an error envelope');
});

const presetConfig = {
  model: listing.result.models[0].id,
  training: { seq_len: 2048, micro_batch_size: 1, global_batch_size: 8 },
  system: { preset: listing.result.systems[0].id, num_gpus: 8 },
};
check('estimate of a preset config gives a result envelope', () => {
  const envelope = JSON.parse(m.call('estimate', JSON.stringify(presetConfig)));
  assert(envelope.schema_version === 1, 'schema_version');
  assert(envelope.ok === true, `not ok: ${JSON.stringify(envelope.errors)}`);
  const r = envelope.result;
  assert(typeof r.fits === 'boolean' && Array.isArray(r.reasons) && Array.isArray(r.notes), 'fits/reasons/notes');
  assert(r.model.parameters > 0, 'parameters');
  assert(Array.isArray(r.memory.stages) && r.memory.stages.length === 1, 'one stage for pp=1');
  for (const key of ['parameters_bytes', 'gradients_bytes', 'optimizer_bytes', 'buffers_bytes', 'activations_bytes', 'transient_bytes', 'peak_bytes', 'reserved_bytes']) {
    assert(Number.isFinite(r.memory.stages[0][key]), `stage 0 ${key}`);
  }
  assert(r.memory.capacity_bytes > 0, 'capacity_bytes');
});
check('bad JSON gives an error envelope', () => {
  const envelope = JSON.parse(m.call('estimate', '{"model": '));
  assert(envelope.schema_version === 1 && envelope.ok === false, JSON.stringify(envelope));
  assert(envelope.errors[0].path === '' && /invalid JSON/.test(envelope.errors[0].message), JSON.stringify(envelope.errors));
});
check('an invalid field is named by its path', () => {
  const config = structuredClone(presetConfig);
  config.training.seq_len = 0;
  const envelope = JSON.parse(m.call('estimate', JSON.stringify(config)));
  assert(envelope.ok === false && envelope.errors.some((e) => e.path === '/training/seq_len'), JSON.stringify(envelope.errors));
});
check('an unknown preset is an error, not an exception', () => {
  const envelope = JSON.parse(m.call('estimate', JSON.stringify({ ...presetConfig, model: 'no-such-model' })));
  assert(envelope.ok === false && envelope.errors[0].path === '/model', JSON.stringify(envelope.errors));
});
check('non-object input is an error envelope', () => {
  for (const text of ['', '[]', '42', 'null', '"x"', '\u0000']) {
    const envelope = JSON.parse(m.call('estimate', text));
    assert(envelope.ok === false && envelope.errors.length > 0, `${JSON.stringify(text)}: ${JSON.stringify(envelope)}`);
  }
});
check('an unknown op is an error envelope at path ""', () => {
  const envelope = JSON.parse(m.call('no_such_op', ''));
  assert(envelope.ok === false && envelope.errors[0].path === '', JSON.stringify(envelope));
});
let schema;
check('schema describes the config, search and what-if documents', () => {
  const envelope = JSON.parse(m.call('schema', ''));
  assert(envelope.ok === true, JSON.stringify(envelope).slice(0, 300));
  schema = envelope.result;
  assert(schema.schema_version === 1, 'schema_version');
  const types = new Set(['int', 'number', 'bool', 'string', 'enum', 'object', 'array', 'map']);
  const lists = [...Object.values(schema.config), schema.search, schema.search_constraints, schema.whatif];
  for (const list of lists) {
    assert(Array.isArray(list) && list.length > 0, 'a section without fields');
    for (const field of list) {
      assert(typeof field.key === 'string' && types.has(field.type), `bad field ${JSON.stringify(field)}`);
      if (field.type === 'enum') assert(Array.isArray(schema.enums[field.enum]), `enum ${field.enum} of ${field.key}`);
    }
  }
  for (const section of ['model', 'training', 'system']) assert(schema.config[section].length > 0, section);
  const keys = schema.config.training.map((f) => f.key);
  for (const key of ['seq_len', 'tp', 'recompute.granularity']) assert(keys.includes(key), `training.${key}`);
  assert(schema.whatif_figures.some((f) => f.id === 'peak_flops' && typeof f.label === 'string'), 'peak_flops figure');
});
check('scale_system scales one figure of a system preset', () => {
  const base = JSON.parse(m.call('preset', listing.result.systems[0].id)).result.system;
  const envelope = JSON.parse(m.call('scale_system', JSON.stringify({ system: listing.result.systems[0].id, figure: 'hbm_bandwidth', factor: 2 })));
  assert(envelope.ok === true, JSON.stringify(envelope).slice(0, 300));
  const scaled = envelope.result.system;
  assert(scaled.gpu.hbm_bandwidth_gb_per_s === 2 * base.gpu.hbm_bandwidth_gb_per_s, JSON.stringify(scaled.gpu));
  assert(scaled.gpu.hbm_capacity_gib === base.gpu.hbm_capacity_gib, 'another figure changed');
  const bad = JSON.parse(m.call('scale_system', JSON.stringify({ system: listing.result.systems[0].id, figure: 'nope', factor: 2 })));
  assert(bad.ok === false && bad.errors.length > 0, JSON.stringify(bad));
});

if (configPath && cliOutputPath) {
  check(`estimate of ${path.basename(configPath)} equals the native CLI`, () => {
    const wasm = JSON.parse(m.call('estimate', fs.readFileSync(configPath, 'utf8')));
    const cli = JSON.parse(fs.readFileSync(cliOutputPath, 'utf8'));
    assert(cli.ok === true, `the CLI output is not a result: ${JSON.stringify(cli).slice(0, 300)}`);
    const difference = sameJson(wasm, cli);
    assert(difference === '', `differs at ${difference}`);
  });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
