// The URL hash as a projection of the page state (see config.js):
//   #v=1&m=llama3-70b&s=h100-sxm-80gb&n=64&seq=8192&mbs=1&gbs=1024&tp=8&pp=4&sp=1
//   plus m.<field>=… / s.<field>=… for fields that differ from the preset,
//   and two optional keys added to version 1 (older links decode as before):
//   view=search|whatif|compare   the open tab (absent: the calculator)
//   c1=…, …, c4=…                pinned configs for Compare, each the same
//                                fields as key:value pairs joined by ';'
//                                (c1=m:llama3-8b;s:h100-sxm-80gb;n:8;tp:2…),
//                                and optionally its name first (name:baseline)
//   and a third, the Search tab's inputs (search_url.js):
//   q=n:512-4096/512;gbs:4096    the inputs of the search last run (written
//                                with view=search; a link holding q opens the
//                                Search tab and runs that search)
// decode() never throws: it keeps every field it can read and names the rest.
import { CUSTOM_MODEL, FIELDS, fieldByUrl, formatText, parseText } from './fields.js';
import { baseSpec, defaultSpec, presetIdOf, presetValue, DEFAULT_TOKENS } from './config.js';
import { clip, compactCount, parseCount } from '../lib/format.js';
import { SEARCH_KEY, decodeSearch, encodeSearch } from './search_url.js';

export const HASH_VERSION = 1;
const MAX_HASH_CHARS = 8000;
const MAX_PARTS = 200;
export const MAX_PINS = 4;
export const VIEWS = ['calc', 'search', 'whatif', 'compare'];
const PIN_KEY = /^c([1-9])$/;

// Characters that need no escaping in a hash value (keeps links readable).
function encodeValue(text) {
  return encodeURIComponent(text).replace(/%2C/g, ',');
}

// extra: {view, pins: [spec…], search: the Search tab's inputs} (all
// optional; search is written only with view 'search').
export function encode(spec, catalog, extra = {}) {
  const parts = [`v=${HASH_VERSION}`, ...specPairs(spec, catalog).map(([k, v]) => `${k}=${v}`)];
  if (extra.view && extra.view !== 'calc' && VIEWS.includes(extra.view)) parts.push(`view=${extra.view}`);
  (extra.pins ?? []).slice(0, MAX_PINS).forEach((pin, i) => parts.push(`c${i + 1}=${encodePin(pin, catalog)}`));
  if (extra.search && extra.view === 'search') parts.push(`${SEARCH_KEY}=${encodeSearch(extra.search)}`);
  return `#${parts.join('&')}`;
}

// A pinned config: key:value pairs joined by ';' (values escaped as in the
// hash, so ':' and ';' inside them are %3A / %3B, and '%' is %25 once more).
function encodePin(spec, catalog) {
  const pairs = specPairs(spec, catalog);
  if (spec.name) pairs.unshift(['name', encodeURIComponent(spec.name)]);
  return pairs.map(([k, v]) => `${k}:${v}`).join(';').replace(/%/g, '%25');
}

export const MAX_PIN_NAME = 40;

// A pin's name as the page keeps it: one line of printable text, clipped.
export function pinName(text) {
  return String(text ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').trim().slice(0, MAX_PIN_NAME);
}

// [key, escaped value] pairs of a spec, in the canonical order.
function specPairs(spec, catalog) {
  const parts = [['m', encodeValue(spec.model.preset)], ['s', encodeValue(spec.system.preset)]];
  const add = (field, value) => parts.push([field.url, encodeValue(formatText(field, value))]);
  const numGpus = FIELDS.system.find((f) => f.key === 'num_gpus');
  if (spec.system.over.num_gpus !== undefined) add(numGpus, spec.system.over.num_gpus);
  const required = new Set(['seq_len', 'micro_batch_size', 'global_batch_size', 'num_micro_batches']);
  for (const field of FIELDS.training) {
    const value = spec.training[field.key];
    if (value === undefined) continue;
    if (!required.has(field.key) && !field.explicit && field.def !== undefined && value === field.def) continue;
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
  if (spec.tokens !== DEFAULT_TOKENS) parts.push(['tok', encodeValue(compactCount(spec.tokens))]);
  return parts;
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

// Returns {state: spec, ignored: [text…], view, pins: [spec…], search:
// the Search tab's inputs or null}. An empty hash, or one from which no
// config field could be read, gives the default view. A link with q opens
// the Search tab.
export function decode(hash, catalog) {
  const ignored = [];
  let text = typeof hash === 'string' ? hash : '';
  if (text.startsWith('#')) text = text.slice(1);
  if (text.length > MAX_HASH_CHARS) {
    ignored.push(`everything after character ${MAX_HASH_CHARS} (the link is too long)`);
    text = text.slice(0, MAX_HASH_CHARS);
  }
  const parts = text.split('&').filter((part) => part !== '');
  if (parts.length > MAX_PARTS) ignored.push(`${parts.length - MAX_PARTS} fields after the first ${MAX_PARTS}`);
  const reader = specReader(catalog, ignored, '');
  const pinTexts = [];
  let view = 'calc';
  let searchText = null;
  const seen = new Set();
  for (const part of parts.slice(0, MAX_PARTS)) {
    const eq = part.indexOf('=');
    const key = safeDecode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? null : safeDecode(part.slice(eq + 1));
    const shown = clip(key ?? part);
    if (key === null || (eq >= 0 && value === null)) { ignored.push(`${clip(part)} (malformed escape)`); continue; }
    if (value === null) { ignored.push(`${shown} (no value)`); continue; }
    if (seen.has(key)) { ignored.push(`${shown}=${clip(value)} (repeated)`); continue; }
    seen.add(key);
    if (key === 'view') {
      if (VIEWS.includes(value)) view = value;
      else ignored.push(`view=${clip(value)} (expected one of ${VIEWS.join(', ')})`);
      continue;
    }
    if (key === SEARCH_KEY) {
      searchText = value;
      continue;
    }
    const pin = PIN_KEY.exec(key);
    if (pin) {
      if (Number(pin[1]) > MAX_PINS) ignored.push(`${shown}=${clip(value)} (at most ${MAX_PINS} pinned configs)`);
      else pinTexts.push([Number(pin[1]), value]);
      continue;
    }
    reader.add(key, value);
  }
  const state = reader.finish(false);
  const pins = [];
  for (const [n, value] of pinTexts.sort((a, b) => a[0] - b[0])) {
    const pinReader = specReader(catalog, ignored, `c${n}: `);
    let name = '';
    for (const item of value.split(';').filter((x) => x !== '')) {
      const colon = item.indexOf(':');
      const pinValue = colon < 0 ? null : safeDecode(item.slice(colon + 1));
      if (colon < 0 || pinValue === null) ignored.push(`c${n}: ${clip(item)} (${colon < 0 ? 'no value' : 'malformed escape'})`);
      else if (item.slice(0, colon) === 'name' && !name) name = pinName(pinValue);
      else pinReader.add(item.slice(0, colon), pinValue);
    }
    const pinned = pinReader.finish(true);
    if (pinned && name) pinned.name = name;
    if (pinned) pins.push(pinned);
    else ignored.push(`c${n}=${clip(value)} (no config fields)`);
  }
  const search = searchText === null ? null : decodeSearch(searchText, ignored);
  if (search) view = 'search';
  return { state, ignored, view, pins, search };
}

// Reads key/value pairs into a spec, adding what it ignores to `ignored`;
// finish() gives the spec, or when no field could be read the default view
// (or null, for a pinned config).
function specReader(catalog, ignored, prefix) {
  const spec = baseSpec(catalog);
  const seen = new Set();
  let accepted = 0;
  return {
    add(key, value) {
      const shown = clip(key);
      if (seen.has(key)) { ignored.push(`${prefix}${shown}=${clip(value)} (repeated)`); return; }
      seen.add(key);
      const problem = key === 'v' && prefix ? 'not inside a pinned config' : apply(spec, key, value, catalog);
      if (problem) ignored.push(`${prefix}${shown}=${clip(value)} (${problem})`);
      else if (key !== 'v') accepted += 1;
    },
    finish(orNull) {
      if (accepted === 0) return orNull ? null : defaultSpec(catalog);
      const t = spec.training;
      if (t.global_batch_size === undefined && t.num_micro_batches === undefined) {
        t.global_batch_size = defaultSpec(catalog).training.global_batch_size;
      }
      return spec;
    },
  };
}

// Applies one key=value to the spec; returns why it was ignored, or ''.
function apply(spec, key, value, catalog) {
  if (key === 'v') return value === String(HASH_VERSION) ? '' : `this page reads version ${HASH_VERSION}`;
  if (key === 'm' || key === 's') {
    const kind = key === 'm' ? 'model' : 'system';
    const list = kind === 'model' ? catalog.models : catalog.systems;
    const id = value === CUSTOM_MODEL ? value : presetIdOf(list, value);
    if (!id) return `unknown ${kind} preset`;
    spec[kind].preset = id;
    return '';
  }
  if (key === 'tok') {
    const tokens = parseCount(value);
    if (!(tokens > 0)) return 'expected a token count such as 15T';
    spec.tokens = tokens;
    return '';
  }
  const field = fieldByUrl(key);
  if (!field) return 'unknown field';
  const parsed = parseText(field, value);
  if (!parsed.ok) return parsed.message;
  if (parsed.value === undefined) return 'empty value';
  if (field.section === 'training') spec.training[field.key] = parsed.value;
  else spec[field.section].over[field.key] = parsed.value;
  return '';
}
