// The editable fields of a config document, one list per section: the
// page's layout (layout.js: which keys, in which order and group, and their
// URL names) joined with the core's schema (the `schema` op: type, enum
// values, default, bounds, unit, label, help). installSchema() builds them
// once the engine has answered; until then the lists are empty. The core
// stays the judge of every value (it names the field in its errors).
import { clip } from '../lib/format.js';
import { LAYOUT } from './layout.js';

const int = 'int';
const num = 'number';
const bool = 'bool';
const str = 'string';
const list = 'list';

export const CUSTOM_MODEL = 'custom';

// {model, training, system}: field lists in layout order. A field is
// {section, key, path, url, label, title, type, values?, def?, min?, max?,
// unit?, group?, main, explicit, pattern?, placeholder?}; type is int | number |
// bool | string | enum | section (an optional object such as moe) | list
// (an array of enum values).
export const FIELDS = { model: [], training: [], system: [] };
const byUrl = new Map();
let installed = null;

// The schema installed last (null before the engine answered).
export function schema() {
  return installed;
}

// Builds FIELDS from the schema; returns the layout keys the schema does not
// know (left out of the form and the links).
export function installSchema(coreSchema) {
  installed = coreSchema;
  byUrl.clear();
  const missing = [];
  for (const [section, layout] of Object.entries(LAYOUT)) {
    const described = new Map((coreSchema?.config?.[section] ?? []).map((f) => [f.key, f]));
    FIELDS[section] = [];
    for (const hint of layout) {
      const field = pageField(section, hint, described, coreSchema?.enums ?? {});
      if (!field) { missing.push(`${section}.${hint.key}`); continue; }
      FIELDS[section].push(field);
      byUrl.set(field.url, field);
    }
  }
  return missing;
}

export function fieldByKey(section, key) {
  return FIELDS[section].find((field) => field.key === key);
}

export function fieldByUrl(url) {
  return byUrl.get(url);
}

// The label of a what-if figure ("peak_flops" -> "Peak FLOP/s").
export function figureLabel(figure) {
  const known = installed?.whatif_figures?.find((f) => f.id === figure);
  return known?.label ?? String(figure).replace(/_/g, ' ');
}

// An int with a few allowed values (zero_stage: 0..3) is a choice.
const SMALL_RANGE = 8;

// One layout entry joined with its schema description; null when the schema
// does not describe the key (or describes a type the form cannot edit).
function pageField(section, hint, described, enums) {
  const entry = described.get(hint.key) ?? mapEntry(hint.key, described);
  if (!entry) return null;
  const field = {
    section, key: hint.key, path: `/${section}/${hint.key.split('.').join('/')}`,
    url: hint.url ?? `${section[0]}.${hint.key}`,
    label: hint.label ?? entry.label ?? hint.key,
    title: describe(entry),
    group: hint.group, main: Boolean(hint.main), explicit: Boolean(hint.explicit), pattern: hint.pattern, placeholder: hint.placeholder,
    unit: entry.unit, min: entry.min, max: entry.max,
  };
  if (entry.default !== undefined) field.def = entry.default;
  const values = entry.enum !== undefined ? enums[entry.enum] : undefined;
  switch (entry.type) {
    case 'int':
      if (Number.isInteger(entry.min) && Number.isInteger(entry.max) && entry.max - entry.min < SMALL_RANGE) {
        field.type = 'enum';
        field.values = Array.from({ length: entry.max - entry.min + 1 }, (_, i) => entry.min + i);
      } else {
        field.type = int;
      }
      break;
    case 'number': case 'bool': case 'string':
      field.type = entry.type;
      break;
    case 'enum':
      if (!Array.isArray(values)) return null;
      field.type = 'enum';
      field.values = values;
      break;
    case 'object':
      field.type = 'section';
      break;
    case 'array':
      if (entry.items !== 'enum' || !Array.isArray(values)) return null;
      field.type = list;
      field.values = values;
      break;
    default:
      return null;
  }
  return field;
}

// "gpu.peak_tflops.bf16": an entry of the map "gpu.peak_tflops", typed by
// the map's items (numbers unless the schema says otherwise).
function mapEntry(key, described) {
  const dot = key.lastIndexOf('.');
  const map = dot > 0 ? described.get(key.slice(0, dot)) : undefined;
  if (map?.type !== 'map') return undefined;
  const { default: _ignored, ...rest } = map;
  return { ...rest, type: map.items ?? num, key, label: undefined };
}

// The hover text: the schema's help, the unit and the bounds.
function describe(entry) {
  const parts = [];
  if (entry.help) parts.push(entry.help);
  const range = [];
  if (entry.min !== undefined) range.push(`${entry.min_exclusive ? '>' : '≥'} ${entry.min}`);
  if (entry.max !== undefined) range.push(`≤ ${entry.max}`);
  const unit = entry.unit ? `in ${entry.unit}` : '';
  if (unit || range.length) parts.push(`(${[unit, range.join(', ')].filter(Boolean).join('; ')})`);
  return parts.join(' ') || undefined;
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const MAX_NUMBER = 1e15;

// Parses one text value (from the URL or a form input) for a field.
// Returns {ok: true, value} or {ok: false, message}. Empty text means unset
// ({ok: true, value: undefined}). Range rules beyond "a finite number of the
// right type" are left to the core, which names the field in its error.
export function parseText(field, text) {
  const trimmed = String(text).trim();
  if (trimmed === '') return { ok: true, value: undefined };
  switch (field.type) {
    case int:
    case num: {
      if (!NUMBER.test(trimmed)) return { ok: false, message: `expected a number, got "${clip(trimmed)}"` };
      const value = Number(trimmed);
      if (!Number.isFinite(value) || Math.abs(value) > MAX_NUMBER) {
        return { ok: false, message: `expected a number up to ${MAX_NUMBER}, got ${clip(trimmed)}` };
      }
      if (field.type === int && !Number.isInteger(value)) {
        return { ok: false, message: `expected an integer, got ${clip(trimmed)}` };
      }
      return { ok: true, value };
    }
    case bool:
      if (trimmed === '1' || trimmed === 'true') return { ok: true, value: true };
      if (trimmed === '0' || trimmed === 'false') return { ok: true, value: false };
      return { ok: false, message: `expected 1 or 0, got "${clip(trimmed)}"` };
    case 'section':
      if (trimmed === '1' || trimmed === 'on') return { ok: true, value: true };
      if (trimmed === '0' || trimmed === 'off') return { ok: true, value: false };
      return { ok: false, message: `expected 1 or 0, got "${clip(trimmed)}"` };
    case 'enum': {
      const value = field.values.find((v) => String(v) === trimmed);
      if (value === undefined) return { ok: false, message: `expected one of ${field.values.join(', ')}, got "${clip(trimmed)}"` };
      return { ok: true, value };
    }
    case str:
      if (field.pattern && !field.pattern.test(trimmed)) return { ok: false, message: `unexpected value "${clip(trimmed)}"` };
      return { ok: true, value: trimmed };
    case list: {
      const items = trimmed.split(',').map((s) => s.trim());
      const bad = items.find((item) => !field.values.includes(item));
      if (bad !== undefined) return { ok: false, message: `expected items of ${field.values.join(', ')}, got "${clip(bad)}"` };
      return { ok: true, value: items };
    }
    default:
      return { ok: false, message: 'unknown field type' };
  }
}

// The inverse of parseText for the URL and the form.
export function formatText(field, value) {
  if (value === undefined || value === null) return '';
  if (field.type === bool || field.type === 'section') return value ? '1' : '0';
  if (field.type === list) return value.join(',');
  return String(value);
}

// Checks a JSON value (from an imported file) against a field's type.
export function acceptsJson(field, value) {
  switch (field.type) {
    case int: return Number.isInteger(value) && Math.abs(value) <= MAX_NUMBER;
    case num: return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_NUMBER;
    case bool: return typeof value === 'boolean';
    case 'enum': return field.values.includes(value);
    case str: return typeof value === 'string' && (!field.pattern || field.pattern.test(value));
    case list: return Array.isArray(value) && value.length > 0 && value.every((v) => field.values.includes(v));
    default: return false;
  }
}
