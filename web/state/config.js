// The page's configuration state ("spec") and its two projections: the
// config document sent to the core, and back from an imported document.
//
// spec = {
//   model:    {preset: 'llama3-70b' | 'custom', over: {'hidden_size': 8192, 'moe': false, ...}},
//   system:   {preset: 'h100-sxm-80gb' | 'custom', over: {'num_gpus': 64, 'gpu.hbm_capacity_gib': 141}},
//   training: {'seq_len': 8192, 'tp': 8, 'recompute.granularity': 'full', ...},
//   tokens:   1e12,   // display only: "time to train N tokens"
// }
// Keys are the dotted field keys of fields.js. A section key ('moe', 'mla')
// holds false (remove it from the preset) or true (add it).
import { CUSTOM_MODEL, FIELDS, acceptsJson, fieldByKey } from './fields.js';

export const DEFAULT_TOKENS = 1e12;
const MAX_TOKENS = 1e18;  // the core's bound on training.train_tokens

// The page's default view. Links name these fields explicitly, so a link
// keeps its meaning if this default ever changes.
export function defaultSpec(catalog) {
  return {
    model: { preset: pickPreset(catalog.models, 'llama3-70b'), over: {} },
    system: { preset: pickPreset(catalog.systems, 'h100-sxm-80gb'), over: { num_gpus: 64 } },
    training: {
      seq_len: 8192, micro_batch_size: 1, global_batch_size: 1024,
      tp: 8, pp: 4, sequence_parallel: true,
    },
    tokens: DEFAULT_TOKENS,
  };
}

// What a link falls back to for the fields it does not name: the required
// ones from the default view, everything else at the core's defaults.
export function baseSpec(catalog) {
  const spec = defaultSpec(catalog);
  spec.training = { seq_len: 8192, micro_batch_size: 1 };
  return spec;
}

// The preset a name selects: its id, or an alias (an older name of the same
// preset, e.g. llama3-405b of llama3.1-405b); undefined when none.
export function presetIdOf(presets, name) {
  return presets.find((p) => p.id === name || (p.aliases ?? []).includes(name))?.id;
}

function pickPreset(presets, wanted) {
  if (presets.some((p) => p.id === wanted)) return wanted;
  return presets.length > 0 ? presets[0].id : CUSTOM_MODEL;
}

export function cloneSpec(spec) {
  const copy = {
    model: { preset: spec.model.preset, over: { ...spec.model.over } },
    system: { preset: spec.system.preset, over: { ...spec.system.over } },
    training: { ...spec.training },
    tokens: spec.tokens,
  };
  if (spec.name) copy.name = spec.name;  // a pinned config's name (Compare)
  return copy;
}

function setDeep(target, parts, value) {
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (node[part] === null || typeof node[part] !== 'object') node[part] = {};
    node = node[part];
  }
  node[parts[parts.length - 1]] = value;
}

export function getDeep(object, key) {
  let node = object;
  for (const part of key.split('.')) {
    if (node === null || typeof node !== 'object' || !(part in node)) return undefined;
    node = node[part];
  }
  return node;
}

// The overrides of a model/system section as a JSON merge patch.
function overridesToPatch(over) {
  const patch = {};
  for (const [key, value] of Object.entries(over)) {
    const parts = key.split('.');
    if (parts.length > 1 && over[parts[0]] === false) continue;  // section removed
    if (parts.length === 1 && fieldByKeyAny(key)?.type === 'section') {
      if (value === false) patch[key] = null;
      else if (!(key in patch) || patch[key] === null) patch[key] = {};
      continue;
    }
    setDeep(patch, parts, value);
  }
  return patch;
}

function fieldByKeyAny(key) {
  return fieldByKey('model', key) ?? fieldByKey('system', key);
}

function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function presetBody(catalog, kind, id) {
  const list = kind === 'model' ? catalog.models : catalog.systems;
  return list.find((p) => p.id === id)?.doc?.[kind];
}

// The section as the core will read it (preset merged with overrides), for
// showing effective values in the form.
export function effectiveSection(spec, kind, catalog) {
  const base = spec[kind].preset === CUSTOM_MODEL ? {} : presetBody(catalog, kind, spec[kind].preset) ?? {};
  return mergePatch(base, overridesToPatch(spec[kind].over));
}

// The section's effective values as overrides, for turning a preset into
// an editable custom model or system.
export function sectionAsOverrides(spec, kind, catalog) {
  const effective = effectiveSection(spec, kind, catalog);
  const over = {};
  for (const field of FIELDS[kind]) {
    const value = getDeep(effective, field.key);
    if (value === undefined || value === null) continue;
    over[field.key] = field.type === 'section' ? true : value;
  }
  if (spec[kind].over.num_gpus !== undefined) over.num_gpus = spec[kind].over.num_gpus;
  return over;
}

export function presetValue(spec, kind, key, catalog) {
  if (spec[kind].preset === CUSTOM_MODEL) return undefined;
  return getDeep(presetBody(catalog, kind, spec[kind].preset), key);
}

// The config document for the core.
export function toConfig(spec) {
  const section = (kind) => {
    const patch = overridesToPatch(spec[kind].over);
    if (spec[kind].preset === CUSTOM_MODEL) {
      for (const [key, value] of Object.entries(patch)) if (value === null) delete patch[key];
      return patch;
    }
    return { preset: spec[kind].preset, ...patch };
  };
  const training = {};
  for (const field of FIELDS.training) {
    const value = spec.training[field.key];
    if (value !== undefined) setDeep(training, field.key.split('.'), value);
  }
  // "Tokens to train" (the throughput panel) is the core's train_tokens; the
  // page's default budget stays out of the document.
  if (spec.tokens !== undefined && spec.tokens !== DEFAULT_TOKENS) training.train_tokens = spec.tokens;
  return { model: section('model'), training, system: section('system') };
}

// Reads an imported config document into a spec. Returns {spec, ignored[],
// tokens} (tokens: the document's training.train_tokens, else undefined),
// ignoring (and naming) whatever the page cannot represent; the core checks
// the rest when it estimates.
export function fromConfig(document, catalog) {
  const spec = baseSpec(catalog);
  spec.system.over = {};
  spec.training = {};
  const ignored = [];
  let tokens;
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return { spec: defaultSpec(catalog), ignored: ['the file is not a JSON object'] };
  }
  for (const [key, value] of Object.entries(document)) {
    if (key === 'model' || key === 'system') readPresetSection(spec, key, value, catalog, ignored);
    else if (key === 'training') tokens = readTraining(spec, value, ignored);
    else if (key === 'schema_version' && value === 1) continue;
    else if (key === 'name' && typeof value === 'string') continue;
    else ignored.push(`/${key}`);
  }
  return { spec, ignored, tokens };
}

// The training section; train_tokens becomes the page's token budget.
function readTraining(spec, value, ignored) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('train_tokens' in value)) {
    readFields(spec.training, 'training', value, '', ignored);
    return undefined;
  }
  const { train_tokens: tokens, ...rest } = value;
  readFields(spec.training, 'training', rest, '', ignored);
  if (typeof tokens === 'number' && Number.isFinite(tokens) && tokens > 0 && tokens <= MAX_TOKENS) {
    spec.tokens = tokens;
    return tokens;
  }
  ignored.push(`/training/train_tokens: unexpected value ${clipJson(tokens)}`);
  return undefined;
}

function readPresetSection(spec, kind, value, catalog, ignored) {
  const idOf = (name) => presetIdOf(kind === 'model' ? catalog.models : catalog.systems, name);
  if (typeof value === 'string') {
    const id = idOf(value);
    if (id) spec[kind].preset = id;
    else ignored.push(`/${kind}: unknown preset "${value}"`);
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ignored.push(`/${kind}: expected a preset id or an object`);
    return;
  }
  const { preset, ...rest } = value;
  const id = typeof preset === 'string' ? idOf(preset) : undefined;
  if (preset === undefined) spec[kind].preset = CUSTOM_MODEL;
  else if (id) spec[kind].preset = id;
  else ignored.push(`/${kind}/preset: unknown preset ${JSON.stringify(preset)}`);
  readFields(spec[kind].over, kind, rest, '', ignored);
}

function readFields(target, section, object, prefix, ignored) {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) {
    ignored.push(`/${section}${prefix ? `/${prefix.split('.').join('/')}` : ''}: expected an object`);
    return;
  }
  for (const [key, value] of Object.entries(object)) {
    const dotted = prefix ? `${prefix}.${key}` : key;
    const path = `/${section}/${dotted.split('.').join('/')}`;
    const field = fieldByKey(section, dotted);
    if (key === 'name' && typeof value === 'string') continue;  // labels only
    if (field?.type === 'section') {
      if (value === null) target[dotted] = false;
      else {
        target[dotted] = true;
        readFields(target, section, value, dotted, ignored);
      }
    } else if (field) {
      // An empty list where the default is empty (cuda_graph.modules: []) is the default.
      if (field.type === 'list' && Array.isArray(value) && value.length === 0 && Array.isArray(field.def) && field.def.length === 0) continue;
      if (acceptsJson(field, value)) target[dotted] = value;
      else ignored.push(`${path}: unexpected value ${clipJson(value)}`);
    } else if (isContainer(section, dotted) && value !== null && typeof value === 'object') {
      readFields(target, section, value, dotted, ignored);
    } else {
      ignored.push(path);
    }
  }
}

function isContainer(section, dotted) {
  return FIELDS[section].some((field) => field.key.startsWith(`${dotted}.`));
}

function clipJson(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
