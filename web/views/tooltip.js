// One floating tooltip for the charts: lines of text near the pointer (or
// the focused element). Text only, via textContent.
import { h } from '../lib/dom.js';

let tip = null;

function element() {
  if (!tip) {
    tip = h('div', { class: 'tooltip', role: 'tooltip', hidden: true });
    document.body.append(tip);
  }
  return tip;
}

export function showTooltip(x, y, lines) {
  const el = element();
  el.replaceChildren(...lines.map((line, i) => h('div', { class: i === 0 ? 'tip-title' : 'tip-line', text: line })));
  el.hidden = false;
  const pad = 12;
  const { width, height } = el.getBoundingClientRect();
  const left = Math.min(x + pad, window.innerWidth - width - 4);
  const top = y + pad + height > window.innerHeight ? y - height - pad : y + pad;
  el.style.left = `${Math.max(4, left)}px`;
  el.style.top = `${Math.max(4, top)}px`;
}

export function hideTooltip() {
  if (tip) tip.hidden = true;
}

// Wires an SVG/HTML element so hovering, tapping or focusing it shows lines().
export function attachTooltip(target, lines) {
  const show = (event) => {
    const rect = target.getBoundingClientRect();
    const x = event.clientX ?? rect.right;
    const y = event.clientY ?? rect.top;
    showTooltip(x, y, lines());
  };
  target.addEventListener('pointermove', show);
  target.addEventListener('pointerdown', show);
  target.addEventListener('focus', show);
  target.addEventListener('pointerleave', hideTooltip);
  target.addEventListener('blur', hideTooltip);
}
