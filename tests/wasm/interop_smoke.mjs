// Node smoke test of the WASM import/export ops the page's dialogs use
// (Module.call): import_hf, import_megatron, import_simumax, export_megatron,
// export_config, export_csv. Each
// answers with an envelope, bad input comes back as data, and a Megatron-LM
// command line survives export -> import.
//   node tests/wasm/interop_smoke.mjs MODULE.mjs REPO_ROOT
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modulePath, root] = process.argv.slice(2);
if (!modulePath || !root) {
  console.error('usage: node interop_smoke.mjs MODULE.mjs REPO_ROOT');
  process.exit(1);
}

let failed = 0;
function check(name, fn) {
  try {
    fn();
    console.log(`ok - ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}\n  ${error.message}`);
  }
}
function assert(condition, message) {
  if (!condition) throw new Error(message);
}

const { default: createTrainsim } = await import(pathToFileURL(path.resolve(modulePath)).href);
const trainsim = await createTrainsim();
const call = (op, input) => JSON.parse(trainsim.call(op, input));
const read = (relative) => fs.readFileSync(path.join(root, relative), 'utf8');
const config = {
  model: 'llama3-8b',
  training: { seq_len: 4096, micro_batch_size: 1, global_batch_size: 64, tp: 2, pp: 2, sequence_parallel: true },
  system: { preset: 'h100-sxm-80gb', num_gpus: 16 },
};

check('import_hf gives a model and notes', () => {
  const envelope = call('import_hf', read('tests/data/hf/deepseek-v3.json'));
  assert(envelope.ok, JSON.stringify(envelope));
  assert(envelope.result.model.moe.num_experts === 256, JSON.stringify(envelope.result.model));
  assert(envelope.result.model.mtp_num_layers === 1, JSON.stringify(envelope.result.model));
  assert(envelope.result.notes.some((n) => n.includes('quantization_config')), envelope.result.notes.join('; '));
});

check('import_hf reports bad input with a path', () => {
  const envelope = call('import_hf', '{"model_type": "gpt2"}');
  assert(!envelope.ok && envelope.errors[0].path === '/hf/model_type', JSON.stringify(envelope));
});

check('import_simumax converts an oracle case, and the config estimates on the converted system', () => {
  const oracle = JSON.parse(read('tests/validation/data/simumax_a100_oracle.json'));
  const system = JSON.parse(read('tests/validation/data/a100_pcie_simumax_system.json')).system;
  const c = oracle.cases[0];
  const envelope = call('import_simumax', JSON.stringify({ model: JSON.stringify(c.simumax_model), strategy: JSON.stringify(c.simumax_strategy) }));
  assert(envelope.ok, JSON.stringify(envelope).slice(0, 500));
  const { config } = envelope.result;
  assert(config.model && config.training && config.system.preset === 'a100-pcie-80gb', JSON.stringify(config).slice(0, 500));
  config.system = { ...system, num_gpus: config.system.num_gpus };  // the SimuMax system, as converted
  const estimate = call('estimate', JSON.stringify(config));
  assert(estimate.ok, JSON.stringify(estimate).slice(0, 500));
  const bad = call('import_simumax', JSON.stringify({ model: '{"layer_num": "x"}', strategy: '{}' }));
  assert(!bad.ok && bad.errors.every((e) => typeof e.path === 'string' && e.message), JSON.stringify(bad));
});

check('import_megatron gives a config for a system preset', () => {
  const envelope = call('import_megatron', JSON.stringify({ args: read('tests/data/megatron/llama3_70b.sh'), system: 'h200-sxm-141gb' }));
  assert(envelope.ok, JSON.stringify(envelope));
  assert(envelope.result.config.system.preset === 'h200-sxm-141gb', JSON.stringify(envelope.result.config.system));
  assert(envelope.result.config.training.vpp === 4, JSON.stringify(envelope.result.config.training));
  assert(call('estimate', JSON.stringify(envelope.result.config)).ok, 'imported config does not estimate');
});

check('import_megatron reports bad flags with a path', () => {
  const envelope = call('import_megatron', JSON.stringify({ args: '--num-layers x' }));
  assert(!envelope.ok && envelope.errors[0].path === '/args/--num-layers', JSON.stringify(envelope));
});

check('export_megatron round-trips through import_megatron', () => {
  const exported = call('export_megatron', JSON.stringify(config));
  assert(exported.ok && exported.result.command.startsWith('torchrun --nnodes 2'), JSON.stringify(exported));
  const imported = call('import_megatron', JSON.stringify({ args: exported.result.command, system: 'h100-sxm-80gb' }));
  assert(imported.ok, JSON.stringify(imported));
  const training = imported.result.config.training;
  assert(training.tp === 2 && training.pp === 2 && training.sequence_parallel === true, JSON.stringify(training));
});

check('export_config expands presets', () => {
  const envelope = call('export_config', JSON.stringify(config));
  assert(envelope.ok && envelope.result.config.model.hidden_size === 4096, JSON.stringify(envelope));
  assert(envelope.result.config.system.gpu.hbm_capacity_gib === 80, JSON.stringify(envelope.result.config.system.gpu));
});

check('export_csv gives the estimate as CSV', () => {
  const envelope = call('export_csv', JSON.stringify(config));
  assert(envelope.ok && envelope.result.csv.startsWith('section,stage,metric,value,unit\n'), JSON.stringify(envelope).slice(0, 300));
  assert(/\nmemory,,peak_bytes,[0-9.e+]+,bytes\n/.test(envelope.result.csv), 'no peak_bytes row');
});

check('exports report bad configs with a path', () => {
  for (const op of ['export_megatron', 'export_config', 'export_csv']) {
    const envelope = call(op, '{"model": "llama3-8b"}');
    assert(!envelope.ok && envelope.errors[0].path === '/training', `${op}: ${JSON.stringify(envelope)}`);
  }
});

process.exit(failed === 0 ? 0 : 1);
