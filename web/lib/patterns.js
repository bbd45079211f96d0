// Hatching for stacked chart segments, so parts differ by more than colour:
// each series has a pattern drawn over its coloured segment (and swatch).
import { s } from './dom.js';

const HATCH = {
  gradients: 'M0 6L6 0',
  optimizer: 'M0 0L6 6',
  buffers: 'M1.5 1.5h0.01M4.5 4.5h0.01',
  activations: 'M0 3H6',
  transient: 'M0 6L6 0M0 0L6 6',
  reserve: 'M3 0V6',
  backward: 'M0 6L6 0',
  recompute: 'M0 3H6',
  tp: 'M0 0L6 6',
  cp: 'M3 0V6',
  ep: 'M1.5 1.5h0.01M4.5 4.5h0.01',
  pp: 'M0 6L6 0M0 0L6 6',
  dp: 'M0 2H6M0 5H6',
  bubble: 'M0 6L6 0',
  straggler: 'M3 0V6M0 3H6',
};

// <defs> with one pattern per hatched series, ids prefixed by `prefix`.
export function hatchDefs(prefix) {
  return s('defs', {}, Object.entries(HATCH).map(([name, d]) => s('pattern', {
    id: `${prefix}-${name}`, patternUnits: 'userSpaceOnUse', width: 6, height: 6,
  }, s('path', { d, class: 'hatch-line' }))));
}

// A rect over a segment with the series' hatching, or null for a solid one.
export function hatchRect(prefix, name, attributes) {
  if (!HATCH[name]) return null;
  return s('rect', { ...attributes, fill: `url(#${prefix}-${name})`, class: 'hatch', 'aria-hidden': 'true' });
}

// A legend swatch: the colour with the same hatching as the chart.
export function swatch(css, name) {
  const hatched = HATCH[name];
  return s('svg', { class: 'swatch-svg', width: 12, height: 12, viewBox: '0 0 12 12', 'aria-hidden': 'true' },
    s('rect', { width: 12, height: 12, rx: 2, class: css }),
    hatched ? s('path', { d: hatched, transform: 'scale(2)', class: 'hatch-line' }) : null);
}
