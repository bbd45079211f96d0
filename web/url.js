// The URL hash as a projection of the spec (see config.js):
//   #v=1&m=llama3-70b&s=h100-sxm-80gb&n=64&seq=8192&mbs=1&gbs=1024&tp=8&pp=4&sp=1
//   plus m.<field>=… / s.<field>=… for fields that differ from the preset.
// decode() never throws: it keeps every field it can read and names the rest.
import { CUSTOM_MODEL, FIELDS, clip, formatText, parseText } from './fields.js';
import { baseSpec, defaultSpec, presetValue, DEFAULT_TOKENS } from './config.js';
import { compactCount, parseCount } from './format.js';

export const HASH_VERSION = 1;
const MAX_HASH_CHARS = 8000;
const MAX_PARTS = 200;

const BY_URL = new Map();
for (const fields of Object.values(FIELDS)) for (const field of fields) BY_URL.set(field.url, field);

// Characters that need no escaping in a hash value (keeps links readable).
function encodeValue(text) {
  return encodeURIComponent(text).replace(/%2C/g, ',');
}

export function encode(spec, catalog) {
  const parts = [`v=${HASH_VERSION}`, `m=${encodeValue(spec.model.preset)}`, `s=${encodeValue(spec.system.preset)}`];
  const add = (field, value) => parts.push(`${field.url}=${encodeValue(formatText(field, value))}`);
  const numGpus = FIELDS.system.find((f) => f.key === 'num_gpus');
  if (spec.system.over.num_gpus !== undefined) add(numGpus, spec.system.over.num_gpus);
  const required = new Set(['seq_len', 'micro_batch_size', 'global_batch_size', 'num_micro_batches']);
  for (const field of FIELDS.training) {
    const value = spec.training[field.key];
    if (value === undefined) continue;
    if (!required.has(field.key) && field.def !== undefined && value === field.def) continue;
    add(field, value);
  }
  for (const kind of ['model', 'system']) {
    for (const field of FIELDS[kind]) {
      if (field.key === 'num_gpus') continue;
      const value = spec[kind].over[field.key];
      if (value === undefined) continue;
      if (field.type === 'section') {
        const hasSection = presetValue(spec, kind, field.key, catalog) !== undefined;
        if (spec[kind].preset !== CUSTOM_MODEL && value === hasSection) continue;
      } else if (sameValue(value, presetValue(spec, kind, field.key, catalog))) {
        continue;
      }
      add(field, value);
    }
  }
  if (spec.tokens !== DEFAULT_TOKENS) parts.push(`tok=${encodeValue(compactCount(spec.tokens))}`);
  return `#${parts.join('&')}`;
}

function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

// Returns {state: spec, ignored: [text…]}. An empty hash, or one from which
// nothing could be read, gives the default view.
export function decode(hash, catalog) {
  const ignored = [];
  let text = typeof hash === 'string' ? hash : '';
  if (text.startsWith('#')) text = text.slice(1);
  if (text.length > MAX_HASH_CHARS) {
    ignored.push(`everything after character ${MAX_HASH_CHARS} (the link is too long)`);
    text = text.slice(0, MAX_HASH_CHARS);
  }
  const spec = baseSpec(catalog);
  const seen = new Set();
  let accepted = 0;
  const parts = text.split('&').filter((part) => part !== '');
  if (parts.length > MAX_PARTS) ignored.push(`${parts.length - MAX_PARTS} fields after the first ${MAX_PARTS}`);
  for (const part of parts.slice(0, MAX_PARTS)) {
    const eq = part.indexOf('=');
    const key = safeDecode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? null : safeDecode(part.slice(eq + 1));
    const shown = clip(key ?? part);
    if (key === null || (eq >= 0 && value === null)) { ignored.push(`${clip(part)} (malformed escape)`); continue; }
    if (value === null) { ignored.push(`${shown} (no value)`); continue; }
    if (seen.has(key)) { ignored.push(`${shown}=${clip(value)} (repeated)`); continue; }
    seen.add(key);
    const problem = apply(spec, key, value, catalog);
    if (problem) ignored.push(`${shown}=${clip(value)} (${problem})`);
    else if (key !== 'v') accepted += 1;
  }
  if (accepted === 0) return { state: defaultSpec(catalog), ignored };
  const t = spec.training;
  if (t.global_batch_size === undefined && t.num_micro_batches === undefined) {
    t.global_batch_size = defaultSpec(catalog).training.global_batch_size;
  }
  return { state: spec, ignored };
}

// Applies one key=value to the spec; returns why it was ignored, or ''.
function apply(spec, key, value, catalog) {
  if (key === 'v') return value === String(HASH_VERSION) ? '' : `this page reads version ${HASH_VERSION}`;
  if (key === 'm' || key === 's') {
    const kind = key === 'm' ? 'model' : 'system';
    const list = kind === 'model' ? catalog.models : catalog.systems;
    if (value !== CUSTOM_MODEL && !list.some((p) => p.id === value)) return `unknown ${kind} preset`;
    spec[kind].preset = value;
    return '';
  }
  if (key === 'tok') {
    const tokens = parseCount(value);
    if (!(tokens > 0)) return 'expected a token count such as 15T';
    spec.tokens = tokens;
    return '';
  }
  const field = BY_URL.get(key);
  if (!field) return 'unknown field';
  const parsed = parseText(field, value);
  if (!parsed.ok) return parsed.message;
  if (parsed.value === undefined) return 'empty value';
  if (field.section === 'training') spec.training[field.key] = parsed.value;
  else spec[field.section].over[field.key] = parsed.value;
  return '';
}
