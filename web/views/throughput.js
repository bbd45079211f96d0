// Throughput cards from result.throughput, and the cost of training N
// tokens (the core's per-1e12-token figures scaled to N). Hidden while the
// core reports no throughput.
import { h } from '../lib/dom.js';
import { formatCount, formatPercent, formatSeconds, formatTflops, formatTokens, formatTokensPerS, parseCount, perTokens } from '../lib/format.js';
import { cloneSpec } from '../state/config.js';
import { isStale, markStale } from './stale.js';

export function mount(root, store, actions) {
  const cards = h('div', { class: 'cards', id: 'throughput-cards' });
  const tokens = h('input', { type: 'text', id: 'train-tokens', inputmode: 'decimal', spellcheck: 'false', 'aria-describedby': 'train-tokens-hint' });
  const hint = h('span', { class: 'hint', id: 'train-tokens-hint', text: 'e.g. 15T, 500B' });
  tokens.addEventListener('change', () => {
    const value = parseCount(tokens.value);
    tokens.setAttribute('aria-invalid', value > 0 ? 'false' : 'true');
    if (!(value > 0)) return;
    const spec = cloneSpec(store.get().spec);
    spec.tokens = value;
    actions.setSpec(spec, { commit: true });
  });
  const convention = h('p', { class: 'note', id: 'flop-convention' });
  root.append(cards, h('label', { class: 'tokens', for: 'train-tokens' }, 'Tokens to train ', tokens, hint), convention);

  const card = (id, label, value, raw) => h('div', { class: 'card', id },
    h('span', { class: 'card-label', text: label }), h('span', { class: 'card-value', dataset: { value: String(raw) }, text: value }));

  store.subscribe((state, previous) => {
    if (state.result === previous.result && state.spec?.tokens === previous.spec?.tokens
        && state.errors === previous.errors && state.localErrors === previous.localErrors) return;
    const t = state.result?.throughput;
    root.hidden = !t;
    if (!t) return;
    markStale(root, isStale(state));
    const n = state.spec.tokens;
    if (document.activeElement !== tokens) tokens.value = formatTokens(n).replace(/\s/g, '');
    cards.replaceChildren(
      card('card-tokens', 'Tokens/s', formatTokensPerS(t.tokens_per_s), t.tokens_per_s),
      card('card-tokens-gpu', 'Tokens/s per GPU', formatTokensPerS(t.tokens_per_s_per_gpu), t.tokens_per_s_per_gpu),
      card('card-model-tflops', 'Model TFLOP/s per GPU', formatTflops(t.model_tflops_per_gpu), t.model_tflops_per_gpu),
      card('card-hw-tflops', 'Hardware TFLOP/s per GPU', formatTflops(t.hardware_tflops_per_gpu), t.hardware_tflops_per_gpu),
      card('card-mfu', 'MFU', formatPercent(t.mfu), t.mfu),
      card('card-train-time', `Time for ${formatTokens(n)} tokens`, formatSeconds(perTokens(t.seconds_per_trillion_tokens, n)), t.seconds_per_trillion_tokens),
      card('card-gpu-hours', `GPU-hours for ${formatTokens(n)} tokens`, formatCount(perTokens(t.gpu_hours_per_trillion_tokens, n), 'GPU·h'), t.gpu_hours_per_trillion_tokens),
    );
    convention.textContent = t.flop_convention ? `MFU and model TFLOP/s count the model's FLOPs by this convention: ${t.flop_convention}` : '';
  });
}
