// The application: reads the link, mounts the views and keeps the URL, the
// store and the results in step (main.js starts the engine first).
//   form/import -> setSpec -> store.spec -> URL hash (push/replace)
//                                        -> engine.estimate -> store.result/errors -> views
//   hashchange (back/forward, pasted link) -> decode -> store.spec
import { store } from './store.js';
import { decode, encode } from './url.js';
import { toConfig } from './config.js';
import * as banner from './views/banner.js';
import * as toolbar from './views/toolbar.js';
import * as configForm from './views/config_form.js';
import * as summary from './views/summary.js';
import * as memoryChart from './views/memory_chart.js';
import * as timeBreakdown from './views/time_breakdown.js';
import * as throughput from './views/throughput.js';
import * as timeline from './views/timeline.js';

let engine = null;
let editing = false;  // an edit in progress owns the current history entry

function setSpec(spec, { commit }) {
  store.set({ spec });
  const hash = encode(spec, store.get().catalog);
  if (hash !== location.hash) {
    if (editing) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
    editing = !commit;
  } else if (commit) {
    editing = false;
  }
}

function linkBanner(ignored) {
  return ignored.length ? { title: 'Parts of this link could not be read and were ignored:', items: ignored } : null;
}

function readHash() {
  const catalog = store.get().catalog;
  const { state, ignored } = decode(location.hash, catalog);
  const canonical = encode(state, catalog);
  if (!store.get().spec || canonical !== encode(store.get().spec, catalog)) store.set({ spec: state, localErrors: {} });
  store.set({ banner: linkBanner(ignored) });
  if (canonical !== location.hash) history.replaceState(null, '', canonical);
  editing = false;
}

let firstResult = true;
async function estimate(spec) {
  document.body.dataset.status = 'computing';
  let envelope;
  try {
    envelope = await engine.estimate(toConfig(spec));
  } catch (error) {
    store.set({ status: 'failed', failure: error.message });
    document.body.dataset.status = 'failed';
    return;
  }
  if (envelope.superseded) return;
  document.body.dataset.estimates = String(Number(document.body.dataset.estimates ?? 0) + 1);
  if (envelope.ok) store.set({ result: envelope.result, errors: [], status: 'ready' });
  else store.set({ errors: Array.isArray(envelope.errors) ? envelope.errors : [{ path: '', message: 'unreadable engine answer' }], status: 'ready' });
  document.body.dataset.status = 'ready';
  if (firstResult && envelope.ok) {
    firstResult = false;
    performance.mark('trainsim:first-result');
  }
}

export async function start(startedEngine) {
  engine = startedEngine;
  const actions = { setSpec };
  banner.mount(document.getElementById('banner'), store);
  toolbar.mount(document.getElementById('toolbar'), store, actions);
  configForm.mount(document.getElementById('config'), store, actions);
  summary.mount(document.getElementById('summary'), store);
  memoryChart.mount(document.getElementById('memory'), store);
  timeBreakdown.mount(document.getElementById('time'), store);
  throughput.mount(document.getElementById('throughput'), store, actions);
  timeline.mount(document.getElementById('timeline'), store);

  let catalog;
  try {
    catalog = await engine.catalog();
  } catch (error) {
    store.set({ status: 'failed', failure: error.message });
    document.body.dataset.status = 'failed';
    return;
  }
  document.getElementById('version').textContent = `trainsim ${catalog.version}`;
  store.subscribe((state, previous) => { if (state.spec !== previous.spec) estimate(state.spec); });
  store.set({ catalog });
  readHash();
  window.addEventListener('hashchange', readHash);
}

