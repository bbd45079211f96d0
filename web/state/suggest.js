// A suggestion's change set ({"training.tp": "4", "training.recompute":
// "{\"granularity\": \"selective\"}"}: config keys and their new values as
// JSON text, core/src/estimate_suggestions.cpp) applied to a spec.
import { cloneSpec } from './config.js';
import { fieldByKey } from './fields.js';

// [{section, key, value}] for each page field the set changes; keys the page
// has no field for go to `missing`.
function flatten(set) {
  const changes = [];
  const missing = [];
  for (const [dotted, text] of Object.entries(set)) {
    const [section, ...rest] = String(dotted).split('.');
    let value;
    try {
      value = JSON.parse(String(text));
    } catch {
      value = String(text);
    }
    const add = (key, v) => {
      if (fieldByKey(section, key)) changes.push({ section, key, value: v });
      else missing.push(`${section}.${key}`);
    };
    const key = rest.join('.');
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && !fieldByKey(section, key)) {
      for (const [inner, v] of Object.entries(value)) add(`${key}.${inner}`, v);
    } else {
      add(key, value);
    }
  }
  return { changes, missing };
}

export function unknownKeys(set) {
  return flatten(set).missing;
}

// The spec with the set applied; a change to the model-parallel degrees
// lets dp follow the GPU count again (as the core's suggestion assumes).
export function applySet(spec, set) {
  const { changes, missing } = flatten(set);
  const next = cloneSpec(spec);
  // A recompute change replaces the whole recompute block.
  if (changes.some((c) => c.section === 'training' && c.key.startsWith('recompute.'))) {
    for (const key of Object.keys(next.training)) if (key.startsWith('recompute.')) delete next.training[key];
  }
  for (const { section, key, value } of changes) {
    if (section === 'training') {
      next.training[key] = value;
      if (['tp', 'pp', 'cp'].includes(key)) delete next.training.dp;
    } else {
      next[section].over[key] = value;
    }
  }
  if (next.training['recompute.granularity'] === 'none') delete next.training['recompute.granularity'];
  return { spec: next, missing };
}
