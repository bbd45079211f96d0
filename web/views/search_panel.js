// The Search tab's form: what to search (the calculator's model and system,
// GPU counts, batch, constraints), Run and Cancel, and the progress: from
// the first moment (the first page counts the layout classes), then classes
// searched, elapsed time, an estimate of the time left, and the best plan so
// far.
// The inputs live in the store (searchInputs); the run goes through
// actions.runSearch / actions.cancelSearch (engine/runs.js).
import { h } from '../lib/dom.js';
import { RECOMPUTE_MODES, defaultHeadroomPercent, searchDegrees, searchDocument } from '../state/search_spec.js';
import { formatSeconds, formatTokensPerS } from '../lib/format.js';
import { planLabel, recomputeLabel } from './search_results.js';

const TICK_MS = 250;
const count = (n) => Number(n).toLocaleString('en-US');

// "1.2 s", "45 s", "3.1 min": an elapsed time or an estimate of the time left.
function duration(ms) {
  return ms < 1000 ? `${Math.max(0, Math.round(ms / 100) / 10).toFixed(1)} s` : formatSeconds(ms / 1000);
}

// The time left, from the pace so far (layout classes differ in cost, so
// this is an estimate; none before a tenth of the classes or a second).
export function searchEta(done, total, elapsedMs) {
  if (!(total > 0) || !(done > 0) || done >= total) return null;
  if (done < total / 10 && elapsedMs < 1000) return null;
  return elapsedMs * (total - done) / done;
}

function presetLabel(catalog, kind, spec) {
  const id = spec[kind].preset;
  const preset = (kind === 'model' ? catalog.models : catalog.systems).find((p) => p.id === id);
  const changed = Object.keys(spec[kind].over).filter((k) => k !== 'num_gpus').length;
  return `${preset?.label ?? (id === 'custom' ? `custom ${kind}` : id)}${changed ? ` (${changed} ${changed === 1 ? 'change' : 'changes'})` : ''}`;
}

export function mount(root, store, actions) {
  const inputs = () => store.get().searchInputs;
  const setInput = (key, value) => store.set({ searchInputs: { ...inputs(), [key]: value } });
  const errors = new Map();

  const text = (key, label, hint, extra = {}) => {
    const id = `search-${key}`;
    const input = h('input', { type: 'text', id, spellcheck: 'false', inputmode: extra.inputmode ?? 'numeric', 'aria-describedby': `${id}-error` });
    input.addEventListener('input', () => setInput(key, input.value));
    const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
    errors.set(key, { error, root: null });
    const field = h('div', { class: 'field', dataset: { input: key } }, h('label', { for: id, text: label, title: hint }), input, error);
    errors.get(key).root = field;
    return { field, input, key };
  };
  const checks = (key, label, options) => {
    const boxes = options.map((o) => h('input', { type: 'checkbox', id: `search-${key}-${o.id}`, value: String(o.id) }));
    const error = h('p', { class: 'field-error', hidden: true });
    boxes.forEach((box) => box.addEventListener('change', () => {
      setInput(key, boxes.filter((b) => b.checked).map((b) => options.find((o) => String(o.id) === b.value).id));
    }));
    const field = h('fieldset', { class: 'checks field-list', dataset: { input: key } }, h('legend', { text: label }),
      boxes.map((box, i) => h('label', { class: 'check', for: box.id }, box, h('span', { text: options[i].label }))), error);
    errors.set(key, { error, root: field });
    return { field, boxes, key };
  };

  const target = h('p', { class: 'search-target', id: 'search-target' });
  const scaled = h('p', { class: 'search-scaled', id: 'search-scaled', hidden: true });
  const gpus = text('gpus', 'GPUs', 'a count, a list (512, 1024) or a range (64-512/64)', { inputmode: 'text' });
  const gbs = text('gbs', 'Global batch (sequences)');
  const seq = text('seq', 'Sequence length');
  const degreeHint = (d) => `${d.help ?? 'empty: every value the rules allow'}; a value fixes it, a list allows those`;
  const degrees = searchDegrees().map((d) => ({ def: d.def, ...text(d.key, d.label, degreeHint(d), { inputmode: 'text' }) }));
  const maxTp = text('max_tp', 'Max TP', 'default: GPUs per node');
  const recompute = checks('recompute', 'Recompute modes', RECOMPUTE_MODES);
  const zero = checks('zero', 'ZeRO stages', [0, 1, 2, 3].map((z) => ({ id: z, label: String(z) })));
  const sp = h('select', { id: 'search-sp', onchange: (e) => setInput('sp', e.target.value) },
    h('option', { value: 'true', text: 'on when TP > 1' }), h('option', { value: 'false', text: 'off' }), h('option', { value: 'both', text: 'try both' }));
  const uneven = h('input', { type: 'checkbox', id: 'search-uneven', onchange: (e) => setInput('uneven', e.target.checked) });
  const headroom = text('headroom', 'Memory headroom (%)', 'share of the usable GPU memory a plan leaves free; empty: the calculator verdict\'s headroom', { inputmode: 'decimal' });
  const topK = text('top_k', 'Top K');
  const objective = h('select', { id: 'search-objective', onchange: (e) => setInput('objective', e.target.value) },
    h('option', { value: 'step_time', text: 'fastest step' }), h('option', { value: 'tokens_per_s_per_gpu', text: 'most tokens/s per GPU' }));
  const textInputs = [gpus, gbs, seq, ...degrees, maxTp, headroom, topK];

  const run = h('button', { type: 'submit', class: 'primary', id: 'search-run', text: 'Run search' });
  const cancel = h('button', { type: 'button', id: 'search-cancel', text: 'Cancel', disabled: true, onclick: () => actions.cancelSearch() });
  const progress = h('progress', { id: 'search-progress', max: '1', value: '0', hidden: true, 'aria-label': 'Search progress' });
  const status = h('p', { class: 'search-status', id: 'search-status', role: 'status' });
  // Elapsed time and time left, ticking while a search runs (not a live region).
  const clock = h('p', { class: 'search-status', id: 'search-clock', hidden: true });
  const best = h('p', { class: 'search-status', id: 'search-best', hidden: true });
  const grid = (...children) => h('div', { class: 'grid' }, ...children);
  const form = h('form', { class: 'panel search-form', id: 'search-form', novalidate: true, autocomplete: 'off', 'aria-labelledby': 'search-title' },
    h('h2', { id: 'search-title', text: 'Search for the fastest plan that fits' }),
    target, scaled,
    grid(gpus.field, gbs.field, seq.field),
    h('details', { class: 'subgroup', open: true }, h('summary', { text: 'Constraints (empty: every valid value)' }),
      grid(...degrees.map((d) => d.field), maxTp.field),
      h('div', { class: 'grid' }, recompute.field, zero.field),
      grid(h('div', { class: 'field' }, h('label', { for: 'search-sp', text: 'Sequence parallel' }), sp),
        h('div', { class: 'field field-bool' }, h('label', { class: 'check', for: 'search-uneven' }, uneven, h('span', { text: 'Try uneven first/last stages' }))))),
    grid(headroom.field, topK.field, h('div', { class: 'field' }, h('label', { for: 'search-objective', text: 'Rank by' }), objective)),
    h('div', { class: 'search-actions' }, run, cancel, progress), status, clock, best);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const state = store.get();
    let system = null;
    if (state.searchSystem) {
      let envelope;
      try {
        envelope = await actions.scaleSystem(state.spec, state.searchSystem);
      } catch (error) {
        envelope = { ok: false, errors: [{ path: '/system', message: `the engine failed: ${error.message}` }] };
      }
      if (!envelope.ok) {
        store.set({ search: { status: 'invalid', envelope, document: null } });
        return;
      }
      system = envelope.result.system;
    }
    const { document, problems } = searchDocument(state.spec, state.searchInputs, system);
    showProblems(problems);
    // A search on What-if's scaled system is not one a link reproduces: it leaves q out.
    if (document) actions.runSearch(document, state.searchSystem ? null : state.searchInputs);
  });
  root.replaceChildren(form);

  function showProblems(problems) {
    for (const [key, { error, root: field }] of errors) {
      error.hidden = !problems[key];
      error.textContent = problems[key] ? `expected ${problems[key]}` : '';
      field.classList.toggle('invalid', Boolean(problems[key]));
    }
  }

  const renderInputs = (state) => {
    const values = state.searchInputs;
    for (const { input, key } of textInputs) if (document.activeElement !== input) input.value = values[key] ?? '';
    for (const box of recompute.boxes) box.checked = values.recompute.includes(box.value);
    for (const box of zero.boxes) box.checked = values.zero.includes(Number(box.value));
    sp.value = values.sp;
    uneven.checked = values.uneven;
    objective.value = values.objective;
  };
  const renderTarget = (state) => {
    const { spec, catalog } = state;
    target.replaceChildren('Model ', h('strong', { text: presetLabel(catalog, 'model', spec) }), ' on ',
      h('strong', { text: presetLabel(catalog, 'system', spec) }), ' (from the calculator)');
    gpus.input.placeholder = String(spec.system.over.num_gpus ?? '');
    gbs.input.placeholder = String(spec.training.global_batch_size ?? '');
    seq.input.placeholder = String(spec.training.seq_len ?? '');
    degrees.forEach((d) => { d.input.placeholder = Array.isArray(d.def) ? d.def.join(', ') : 'any'; });
    maxTp.input.placeholder = 'per node';
    headroom.input.placeholder = String(defaultHeadroomPercent() ?? '');
    topK.input.placeholder = '10';
    scaled.hidden = !state.searchSystem;
    if (state.searchSystem) {
      scaled.replaceChildren(`System changed for this search: ${state.searchSystem.label} `,
        h('button', { type: 'button', class: 'link', id: 'search-scaled-clear', text: 'use the calculator’s system', onclick: () => store.set({ searchSystem: null }) }));
    }
  };
  let ticking = null;
  const renderClock = () => {
    const search = store.get().search;
    if (search.status !== 'running') return;
    const elapsedMs = performance.now() - (search.startedAt ?? performance.now());
    const eta = searchEta(search.done, search.total, elapsedMs);
    clock.hidden = false;
    clock.dataset.elapsedMs = String(Math.round(elapsedMs));
    clock.dataset.etaMs = eta === null ? '' : String(Math.round(eta));
    clock.textContent = `${duration(elapsedMs)} elapsed${eta === null ? '' : `, about ${duration(eta)} left`}`;
  };
  const renderBest = (search) => {
    const plan = search.best;
    best.hidden = !(search.status === 'running' && plan);
    if (best.hidden) return;
    const t = plan.config?.training ?? {};
    // The GPU count, when the search is over several.
    const range = search.document?.num_gpus !== null && typeof search.document?.num_gpus === 'object';
    const gpus = range ? plan.config?.system?.num_gpus : undefined;
    best.dataset.seconds = String(plan.metrics.iteration_s);
    best.textContent = `Best so far: ${gpus ? `${gpus} GPUs, ` : ''}${planLabel(t)}, recompute ${recomputeLabel(t.recompute)}: `
      + `${formatSeconds(plan.metrics.iteration_s)} per step, ${formatTokensPerS(plan.metrics.tokens_per_s_per_gpu)} per GPU`;
  };
  const renderRun = (state) => {
    const search = state.search;
    const running = search.status === 'running';
    cancel.disabled = !running;
    progress.hidden = !running && search.status !== 'done';
    // Indeterminate (no value) until the first page has counted the classes.
    if (running && !(search.total > 0)) progress.removeAttribute('value');
    else progress.value = running ? search.done / search.total : 1;
    status.dataset.status = search.status;
    if (running && !ticking) ticking = setInterval(renderClock, TICK_MS);
    if (!running && ticking) { clearInterval(ticking); ticking = null; }
    if (running) renderClock();
    else clock.hidden = true;
    renderBest(search);
    status.textContent = {
      idle: 'Plans are enumerated, checked and estimated in your browser.',
      running: search.total
        ? `Evaluating layout classes: ${count(search.done)} of ${count(search.total)} (${Math.floor(100 * search.done / search.total)}%)…`
        : 'Counting the layout classes and searching the first ones…',
      done: `Done in ${search.elapsedMs >= 1000 ? `${(search.elapsedMs / 1000).toFixed(2)} s` : `${Math.round(search.elapsedMs)} ms`}.`,
      cancelled: 'Cancelled.',
      invalid: 'The search document has problems (see the results).',
      failed: `The engine failed: ${search.failure ?? ''}`,
    }[search.status] ?? '';
  };

  store.subscribe((state, previous) => {
    if (!state.spec || !state.catalog) return;
    if (state.searchInputs !== previous.searchInputs || !previous.spec) renderInputs(state);
    if (state.spec !== previous.spec || state.searchSystem !== previous.searchSystem || !previous.spec) renderTarget(state);
    if (state.search !== previous.search || !previous.spec) renderRun(state);
  });
  const state = store.get();
  if (state.spec && state.catalog) {
    renderInputs(state);
    renderTarget(state);
    renderRun(state);
  }
}
