// The engine runs behind the Search, What-if and Compare tabs; their answers
// go to the store. What-if and the pinned configs are computed only while
// their tab is open (and again when the plan or the pins change).
import { toConfig } from '../state/config.js';
import { encode } from '../state/url.js';

export function startRuns(engine, store) {
  let started = 0;

  async function runSearch(document) {
    started = performance.now();
    // startedAt: for the elapsed time and the ETA the Search tab shows while it runs.
    store.set({ search: { status: 'running', done: 0, total: 0, best: null, startedAt: started, document, envelope: store.get().search.envelope } });
    let envelope;
    try {
      envelope = await engine.search.start(document, ({ done, total, best }) => {
        if (store.get().search.document === document) store.set({ search: { ...store.get().search, done, total, best } });
      });
    } catch (error) {
      store.set({ search: { status: 'failed', failure: error.message, document } });
      return;
    }
    if (envelope.cancelled) {
      if (store.get().search.document === document) store.set({ search: { ...store.get().search, status: 'cancelled' } });
      return;
    }
    const elapsedMs = performance.now() - started;
    store.set({ search: { status: envelope.ok ? 'done' : 'invalid', envelope, document, elapsedMs, done: 1, total: 1 } });
  }

  // An explicit cancel also stops the helper workers' pages in flight.
  function cancelSearch() {
    engine.search.cancel({ hard: true });
  }

  async function runWhatif(spec) {
    store.set({ whatif: { ...store.get().whatif, status: 'running', spec } });
    let envelope;
    try {
      envelope = await engine.whatif(toConfig(spec));
    } catch (error) {
      envelope = { ok: false, errors: [{ path: '', message: `the engine failed: ${error.message}` }] };
    }
    if (envelope.superseded) return;
    store.set({ whatif: { status: 'done', envelope, spec } });
  }

  // Pinned configs: one estimate each, cached by their link text.
  const pinAnswers = new Map();
  async function estimatePins(state) {
    const keys = state.pins.map((pin) => encode(pin, state.catalog));
    const missing = keys.map((key, i) => [key, state.pins[i]]).filter(([key]) => !pinAnswers.has(key));
    for (const [key, pin] of missing) {
      pinAnswers.set(key, null);
      try {
        pinAnswers.set(key, await engine.run('estimate', JSON.stringify(toConfig(pin))));
      } catch (error) {
        pinAnswers.set(key, { ok: false, errors: [{ path: '', message: `the engine failed: ${error.message}` }] });
      }
    }
    const now = store.get();
    const aligned = now.pins.map((pin) => pinAnswers.get(encode(pin, now.catalog)) ?? null);
    if (aligned.length !== now.pinResults.length || aligned.some((answer, i) => answer !== now.pinResults[i])) {
      store.set({ pinResults: aligned });
    }
  }

  store.subscribe((state, previous) => {
    if (!state.spec) return;
    if (state.view === 'search' && state.view !== previous.view) engine.warmSearch();
    if (state.view === 'whatif' && (state.spec !== previous.spec || state.view !== previous.view) && state.whatif.spec !== state.spec) runWhatif(state.spec);
    if (state.view === 'compare' && (state.pins !== previous.pins || state.view !== previous.view)) estimatePins(state);
  });
  const now = store.get();
  if (now.spec && now.view === 'whatif') runWhatif(now.spec);
  if (now.view === 'search') engine.warmSearch();
  if (now.spec && now.view === 'compare') estimatePins(now);

  return { runSearch, cancelSearch };
}
