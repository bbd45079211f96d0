// The Search tab's inputs and the search document they make (see
// trainsim.h search_json and README "Search and what-if"). Model, system,
// sequence length, precision and the shared training settings come from the
// calculator's spec; empty inputs fall back to the calculator's values.
// Which degrees the search chooses, and so which training keys it sets
// itself, come from the core's schema (search, search_constraints).
import { toConfig } from './config.js';
import { schema } from './fields.js';

export const RECOMPUTE_MODES = [
  { id: 'none', label: 'none', mode: { granularity: 'none' } },
  { id: 'selective', label: 'selective', mode: { granularity: 'selective' } },
  { id: 'full1', label: 'full, 1 layer', mode: { granularity: 'full', method: 'uniform', num_layers: 1 } },
  { id: 'full', label: 'full, every layer', mode: { granularity: 'full', method: 'block', num_layers: 'all' } },
];

// Constraints with inputs of their own in the Search form (not a free list
// of degrees).
const OWN_INPUTS = new Set(['max_tp', 'zero_stage', 'recompute', 'sequence_parallel', 'uneven_stages']);

// Constraints that list values of a training key (pipeline_schedule,
// cp_comm_type, fp8_recipe, optimizer_offload_fraction, ...): the search
// tries the calculator's value.
const choiceKeys = () => new Set(schema()?.search_choices ?? []);

// The degrees the search chooses and a list of values constrains
// ([{key, label, help, def}], schema order): tp, pp, vpp, cp, ep, etp, dp,
// micro_batch_size... def: the core's values when the input is empty.
export function searchDegrees() {
  const intChoices = (f) => f.type === 'int' || (f.type === 'array' && f.items === 'int');
  const choices = choiceKeys();
  return (schema()?.search_constraints ?? [])
    .filter((f) => !f.key.includes('.') && !OWN_INPUTS.has(f.key) && !choices.has(f.key) && intChoices(f))
    .map((f) => ({ key: f.key, label: f.label ?? f.key, help: f.help, def: f.default }));
}

// The core's default memory headroom of a search, in percent (its schema).
export function defaultHeadroomPercent() {
  const field = (schema()?.search ?? []).find((f) => f.key === 'memory_headroom');
  return typeof field?.default === 'number' ? field.default * 100 : undefined;
}

export function defaultSearchInputs() {
  return {
    gpus: '', gbs: '', seq: '',
    tp: '', pp: '', vpp: '', cp: '', ep: '', etp: '', micro_batch_size: '1,2,4,8',
    max_tp: '', recompute: ['none', 'selective', 'full1', 'full'], zero: [1],
    sp: 'true', uneven: false, headroom: '', top_k: '10', objective: 'step_time',
  };
}

// Keys of the calculator's training section the search sets itself: those a
// search document names at its top level (seq_len, dtype,
// global_batch_size) or in its constraints (tp, recompute, ...), and those
// the core derives from them (core/src/io/search_json.cpp,
// searched_training_keys); the rest are shared by every plan.
const DERIVED = {
  global_batch_size: ['num_micro_batches'],
  uneven_stages: ['num_layers_in_first_stage', 'num_layers_in_last_stage'],
};

function chosenTrainingKeys() {
  const named = [...(schema()?.search ?? []), ...(schema()?.search_constraints ?? [])].map((f) => f.key.split('.')[0]);
  return new Set(named.flatMap((key) => [key, ...(DERIVED[key] ?? [])]));
}

const LIST = /^\s*\d+(\s*,\s*\d+)*\s*$/;
const RANGE = /^\s*(\d+)\s*-\s*(\d+)\s*(?:\/\s*(\d+))?\s*$/;

// "8" -> 8, "1, 2, 4" -> [1, 2, 4], "" or "any" -> undefined; null if unreadable.
export function parseChoices(text) {
  const trimmed = String(text ?? '').trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'any') return undefined;
  if (!LIST.test(trimmed)) return null;
  const values = [...new Set(trimmed.split(',').map((v) => Number(v.trim())))];
  if (values.some((v) => !Number.isSafeInteger(v) || v < 1)) return null;
  return values.length === 1 ? values[0] : values;
}

// GPU counts: "1024", "512, 1024" or "64-512/64" ({min, max, step}).
export function parseGpus(text) {
  const range = RANGE.exec(String(text ?? ''));
  if (range) {
    const [min, max, step] = [Number(range[1]), Number(range[2]), Number(range[3] ?? 1)];
    return min >= 1 && max >= min && step >= 1 ? { min, max, step } : null;
  }
  return parseChoices(text);
}

function positiveInt(text, fallback) {
  const trimmed = String(text ?? '').trim();
  if (trimmed === '') return fallback;
  return /^\d+$/.test(trimmed) && Number(trimmed) >= 1 ? Number(trimmed) : null;
}

// The GPU count is the search's own (num_gpus at the top level).
function withoutGpuCount(system) {
  const { num_gpus: _count, ...rest } = system;
  return rest;
}

// Returns {document, problems: {input: message}}; document is null when a
// problem stops the search. system: a system section to search on instead
// of the calculator's (What-if's scaled system).
export function searchDocument(spec, inputs, scaledSystem = null) {
  const problems = {};
  const config = toConfig(spec);
  const { num_gpus: specGpus, ...system } = config.system;
  const gpus = inputs.gpus.trim() === '' ? specGpus : parseGpus(inputs.gpus);
  if (gpus === null || gpus === undefined) problems.gpus = 'a count, a list (512, 1024) or a range (64-512/64)';
  const seq = positiveInt(inputs.seq, config.training.seq_len);
  if (!seq) problems.seq = 'a positive integer';
  const gbs = positiveInt(inputs.gbs, config.training.global_batch_size);
  if (!gbs) problems.gbs = 'a positive integer (sequences)';
  const constraints = {};
  for (const { key } of searchDegrees()) {
    const value = parseChoices(inputs[key] ?? '');
    if (value === null) problems[key] = 'a value or a list such as 1, 2, 4';
    else if (value !== undefined) constraints[key] = value;
  }
  const maxTp = positiveInt(inputs.max_tp, undefined);
  if (maxTp === null) problems.max_tp = 'a positive integer';
  else if (maxTp !== undefined) constraints.max_tp = maxTp;
  const modes = RECOMPUTE_MODES.filter((m) => inputs.recompute.includes(m.id)).map((m) => m.mode);
  if (modes.length === 0) problems.recompute = 'choose at least one';
  else constraints.recompute = modes;
  if (inputs.zero.length === 0) problems.zero = 'choose at least one';
  else constraints.zero_stage = [...inputs.zero].sort();
  constraints.sequence_parallel = inputs.sp === 'both' ? 'both' : inputs.sp === 'true';
  if (inputs.uneven) constraints.uneven_stages = true;
  // Keys the search may try several values of (pipeline_schedule, the
  // offloads...) are the search's to set: the calculator's value is the one
  // tried, instead of leaving the key to the core's default.
  for (const key of choiceKeys()) {
    if (config.training[key] !== undefined) constraints[key] = config.training[key];
  }
  // Empty: the core's default (the memory verdict's headroom), so that a plan the
  // search returns is one the calculator calls "fits".
  const headroomText = String(inputs.headroom ?? '').trim();
  const headroom = headroomText === '' ? null : Number(headroomText);
  if (headroom !== null && !(headroom >= 0 && headroom < 99)) problems.headroom = 'a percentage from 0 to 98';
  const topK = positiveInt(inputs.top_k, 10);
  if (!topK || topK > 100) problems.top_k = 'from 1 to 100';
  if (Object.keys(problems).length) return { document: null, problems };

  const training = {};
  const chosen = chosenTrainingKeys();
  for (const [key, value] of Object.entries(config.training)) if (!chosen.has(key)) training[key] = value;
  const document = {
    model: config.model,
    system: scaledSystem ? withoutGpuCount(scaledSystem) : system,
    num_gpus: gpus,
    global_batch_size: gbs,
    seq_len: seq,
    constraints,
    ...(headroom === null ? {} : { memory_headroom: headroom / 100 }),
    top_k: topK,
    objective: inputs.objective === 'tokens_per_s_per_gpu' ? 'tokens_per_s_per_gpu' : 'step_time',
    include_points: true,
  };
  if (config.training.dtype) document.dtype = config.training.dtype;
  if (Object.keys(training).length) document.training = training;
  return { document, problems };
}
