// Display units: the only place where the core's SI values (bytes, seconds,
// FLOP/s) become human units. No estimation happens here.

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function fixed(value, digits = 3) {
  // Three significant digits, without exponent notation: 0.123, 1.23, 12.3, 123, 1234.
  const abs = Math.abs(value);
  if (abs === 0) return '0';
  const decimals = abs >= 100 ? 0 : abs >= 10 ? digits - 2 : abs >= 1 ? digits - 1 : digits;
  return value.toFixed(Math.max(0, decimals));
}

// One unit per view: a chart, a table or a list picks the unit that suits
// its largest value (bytesUnit / secondsUnit) and writes every value in it.
const TiB = 1024 ** 4;
const BYTE_UNITS = [{ name: 'TiB', size: TiB }, { name: 'GiB', size: GiB }, { name: 'MiB', size: MiB }];

export function bytesUnit(maxBytes) {
  const max = Math.abs(maxBytes);
  if (max >= 4 * TiB) return BYTE_UNITS[0];
  if (max >= GiB / 2 || !Number.isFinite(max) || max === 0) return BYTE_UNITS[1];
  return BYTE_UNITS[2];
}

// A value in a view's unit; a nonzero value too small to show reads "< 0.001".
function inUnit(value, size, name) {
  if (!Number.isFinite(value)) return '–';
  const scaled = value / size;
  if (scaled !== 0 && Math.abs(scaled) < 0.0005) return `< 0.001 ${name}`;
  return `${fixed(scaled)} ${name}`;
}

export function formatBytesIn(bytes, unit) {
  return inUnit(bytes, unit.size, unit.name);
}

const SECOND_UNITS = [{ name: 's', size: 1 }, { name: 'ms', size: 1e-3 }, { name: 'µs', size: 1e-6 }];

export function secondsUnit(maxSeconds) {
  const max = Math.abs(maxSeconds);
  if (max >= 1 || !Number.isFinite(max) || max === 0) return SECOND_UNITS[0];
  return max >= 1e-3 ? SECOND_UNITS[1] : SECOND_UNITS[2];
}

export function formatSecondsIn(seconds, unit) {
  return inUnit(seconds, unit.size, unit.name);
}

// A step time: always in seconds ("141 s", "2.35 s", "0.512 s").
export function formatStep(seconds) {
  return inUnit(seconds, 1, 's');
}

export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return '–';
  if (Math.abs(bytes) >= GiB / 2 || bytes === 0) return `${fixed(bytes / GiB)} GiB`;
  return `${fixed(bytes / MiB)} MiB`;
}

export function formatGiB(bytes) {
  return Number.isFinite(bytes) ? `${fixed(bytes / GiB)} GiB` : '–';
}

export function formatSeconds(seconds) {
  if (!Number.isFinite(seconds)) return '–';
  const abs = Math.abs(seconds);
  if (abs === 0) return '0 ms';
  if (abs < 1e-3) return `${fixed(seconds * 1e6)} µs`;
  if (abs < 1) return `${fixed(seconds * 1e3)} ms`;
  if (abs < 120) return `${fixed(seconds)} s`;
  if (abs < 2 * 3600) return `${fixed(seconds / 60)} min`;
  if (abs < 48 * 3600) return `${fixed(seconds / 3600)} h`;
  return `${fixed(seconds / 86400)} days`;
}

export function formatMs(seconds) {
  return Number.isFinite(seconds) ? `${fixed(seconds * 1e3)} ms` : '–';
}

// Axis labels: round tick values in a fixed unit ("0 s", "20 s", "2.5 ms").
export function formatTick(value, unit) {
  return `${Number(value.toPrecision(6))} ${unit}`;
}

export function formatTflops(tflops) {
  return Number.isFinite(tflops) ? `${fixed(tflops)} TFLOP/s` : '–';
}

export function formatPercent(fraction) {
  return Number.isFinite(fraction) ? `${fixed(fraction * 100)} %` : '–';
}

const SUFFIXES = [[1e15, 'P'], [1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];

// 70553706496 -> "70.6 B" (parameters, tokens, GPU-hours)
export function formatCount(value, unit = '') {
  if (!Number.isFinite(value)) return '–';
  const tail = unit ? ` ${unit}` : '';
  for (const [scale, suffix] of SUFFIXES) {
    if (Math.abs(value) >= scale) return `${fixed(value / scale)} ${suffix}${tail}`;
  }
  return `${fixed(value)}${tail}`;
}

// A lossless short form for links: 15e12 -> "15T", 1234 -> "1234".
export function compactCount(value) {
  for (const [scale, suffix] of SUFFIXES) {
    if (Math.abs(value) >= scale) {
      const text = String(value / scale);
      if (Number(text) * scale === value && text.length <= 8) return `${text}${suffix}`;
    }
  }
  return String(value);
}

// A token count for labels: 15e12 -> "15T", 1.234e12 -> "1.23 T".
export function formatTokens(value) {
  const compact = compactCount(value);
  return compact.length <= 6 ? compact : formatCount(value);
}

// "15T", "2.5B", "1e12", "1000000" -> number; NaN when unreadable.
export function parseCount(text) {
  const match = /^\s*(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([kKMBTP]?)\s*$/.exec(String(text));
  if (!match) return NaN;
  const scale = { '': 1, k: 1e3, K: 1e3, M: 1e6, B: 1e9, T: 1e12, P: 1e15 }[match[2]];
  const value = Number(match[1]) * scale;
  return Number.isFinite(value) && value <= 1e18 ? value : NaN;
}

// Scales a core "per 1e12 tokens" figure to N tokens (a change of unit).
export function perTokens(perTrillion, tokens) {
  return (perTrillion * tokens) / 1e12;
}

export function formatTokensPerS(value) {
  return formatCount(value, 'tok/s');
}

// Shortens text for messages and labels.
export function clip(text, max = 40) {
  const s = String(text);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
