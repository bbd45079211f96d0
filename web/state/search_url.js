// The Search tab's inputs in the link: one key of the URL hash (url.js),
//   q=n:512-4096/512;gbs:4096;rc:none,full;k:20
// holding the inputs of the search last run that differ from the form's
// defaults (search_spec.js defaultSearchInputs), as key:value items joined
// by ';' (values escaped as in the hash, so ':' and ';' inside them are %3A
// / %3B, and '%' is %25 once more, as in a pinned config). "q=" alone is a
// search with every default. Part of hash version 1: a link without q
// decodes as before. decodeSearch() never throws: it keeps every input it
// can read and names the rest.
import { RECOMPUTE_MODES, defaultSearchInputs, parseChoices, parseGpus, searchDegrees } from './search_spec.js';
import { clip } from '../lib/format.js';

export const SEARCH_KEY = 'q';
const MAX_VALUE_CHARS = 100;
const MAX_ITEMS = 40;
const OBJECTIVES = ['step_time', 'tokens_per_s_per_gpu'];
const SP = ['true', 'false', 'both'];
const ZERO = [0, 1, 2, 3];

const optionalInt = (text) => text === '' || (/^\d{1,15}$/.test(text) && Number(text) >= 1);

// Each input: its key in the link, how its value is written, and how it is
// read back ({ok, value} or {ok: false, expected}).
function inputCodecs() {
  const text = (input, url, check, expected) => ({
    input, url,
    write: (value) => String(value ?? ''),
    read: (value) => (check(value.trim()) ? { ok: true, value: value.trim() } : { ok: false, expected }),
  });
  const list = (input, url, ids, expected) => ({
    input, url,
    write: (value) => value.join(','),
    read: (value) => {
      const items = value.split(',').map((v) => v.trim());
      const chosen = ids.filter((id) => items.includes(String(id)));
      return chosen.length === items.length && chosen.length > 0 ? { ok: true, value: chosen } : { ok: false, expected };
    },
  });
  const degrees = searchDegrees().map((d) => text(d.key, d.key === 'micro_batch_size' ? 'mbs' : d.key,
    (v) => parseChoices(v) !== null, 'a value or a list such as 1,2,4'));
  return [
    text('gpus', 'n', (v) => v === '' || (parseGpus(v) ?? null) !== null, 'a count, a list (512,1024) or a range (64-512/64)'),
    text('gbs', 'gbs', optionalInt, 'a positive integer'),
    text('seq', 'seq', optionalInt, 'a positive integer'),
    ...degrees,
    text('max_tp', 'mtp', optionalInt, 'a positive integer'),
    list('recompute', 'rc', RECOMPUTE_MODES.map((m) => m.id), `some of ${RECOMPUTE_MODES.map((m) => m.id).join(', ')}`),
    list('zero', 'z', ZERO, 'some of 0, 1, 2, 3'),
    { input: 'sp', url: 'sp', write: String, read: (v) => (SP.includes(v) ? { ok: true, value: v } : { ok: false, expected: SP.join(', ') }) },
    {
      input: 'uneven', url: 'u', write: (v) => (v ? '1' : '0'),
      read: (v) => (v === '1' || v === '0' ? { ok: true, value: v === '1' } : { ok: false, expected: '1 or 0' }),
    },
    text('headroom', 'h', (v) => v === '' || (/^\d{1,2}(\.\d{1,6})?$/.test(v) && Number(v) < 99), 'a percentage from 0 to 98'),
    text('top_k', 'k', (v) => v === '' || (/^\d{1,3}$/.test(v) && Number(v) >= 1 && Number(v) <= 100), 'from 1 to 100'),
    { input: 'objective', url: 'o', write: String, read: (v) => (OBJECTIVES.includes(v) ? { ok: true, value: v } : { ok: false, expected: OBJECTIVES.join(', ') }) },
  ];
}

const escape = (text) => encodeURIComponent(text).replace(/%2C/g, ',').replace(/%2F/g, '/');

// The link value of a search's inputs: the items that differ from the defaults.
export function encodeSearch(inputs) {
  const defaults = defaultSearchInputs();
  const items = [];
  for (const codec of inputCodecs()) {
    const value = codec.write(inputs[codec.input] ?? defaults[codec.input]);
    if (value !== codec.write(defaults[codec.input])) items.push(`${codec.url}:${escape(value)}`);
  }
  return items.join(';').replace(/%/g, '%25');
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

// The inputs a link value holds (the defaults for the rest); what it cannot
// read goes to `ignored`, each item naming the input and what was expected.
export function decodeSearch(text, ignored) {
  const inputs = defaultSearchInputs();
  const codecs = new Map(inputCodecs().map((c) => [c.url, c]));
  const seen = new Set();
  const items = String(text ?? '').split(';').filter((item) => item !== '');
  if (items.length > MAX_ITEMS) ignored.push(`q: ${items.length - MAX_ITEMS} search inputs after the first ${MAX_ITEMS}`);
  for (const item of items.slice(0, MAX_ITEMS)) {
    const colon = item.indexOf(':');
    const key = colon < 0 ? item : item.slice(0, colon);
    const value = colon < 0 ? null : safeDecode(item.slice(colon + 1));
    const codec = codecs.get(key);
    let problem = '';
    if (colon < 0) problem = 'no value';
    else if (value === null) problem = 'malformed escape';
    else if (!codec) problem = 'unknown search input';
    else if (seen.has(key)) problem = 'repeated';
    else if (value.length > MAX_VALUE_CHARS) problem = `longer than ${MAX_VALUE_CHARS} characters`;
    if (!problem) {
      const read = codec.read(value);
      if (read.ok) inputs[codec.input] = read.value;
      else problem = `expected ${read.expected}`;
    }
    seen.add(key);
    if (problem) ignored.push(`q: ${clip(colon < 0 ? item : `${key}=${value ?? item.slice(colon + 1)}`)} (${problem})`);
  }
  return inputs;
}
