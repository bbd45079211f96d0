// The application: reads the link, mounts the views and keeps the URL, the
// store and the results in step (main.js starts the engine first).
//   form/import -> setSpec -> store.spec -> URL hash (push/replace)
//                                        -> engine.estimate -> store.result/errors -> views
//   tabs, pins  -> setView / setPins     -> URL hash (view=, c1=…c4=)
//   Run search  -> runSearch -> store.searchQuery -> URL hash (q=, with view=search)
//   hashchange (back/forward, pasted link) -> decode -> store.spec, view, pins
// The Search, What-if and Compare runs are in engine/runs.js.
import { store } from './state/store.js';
import { MAX_PINS, decode, encode } from './state/url.js';
import { encodeSearch } from './state/search_url.js';
import { cloneSpec, fromConfig, toConfig } from './state/config.js';
import { effectiveSection } from './state/config.js';
import { figureLabel, installSchema } from './state/fields.js';
import { applySet, unknownKeys } from './state/suggest.js';
import { startRuns } from './engine/runs.js';
import * as banner from './views/banner.js';
import * as explain from './views/explain.js';
import * as tabs from './views/tabs.js';
import * as toolbar from './views/toolbar.js';
import * as configForm from './views/config_form.js';
import * as summary from './views/summary.js';
import * as memoryChart from './views/memory_chart.js';
import * as timeBreakdown from './views/time_breakdown.js';
import * as throughput from './views/throughput.js';
import * as timeline from './views/timeline.js';
import * as memoryTimeline from './views/memory_timeline.js';
import * as opsTable from './views/ops_table.js';
import * as panes from './views/panes.js';
import * as searchPanel from './views/search_panel.js';
import * as searchResults from './views/search_results.js';
import * as searchScatter from './views/search_scatter.js';
import * as whatif from './views/whatif.js';
import * as compare from './views/compare.js';
import * as importDialog from './views/import_dialog.js';
import * as exportDialog from './views/export_dialog.js';

let engine = null;
let editing = false;  // an edit in progress owns the current history entry

function pageHash(state = store.get()) {
  return encode(state.spec, state.catalog, { view: state.view, pins: state.pins, search: state.searchQuery });
}

// Writes the state to the URL: a new history entry for a committed change,
// the current one while an edit is in progress.
function syncUrl(commit) {
  const hash = pageHash();
  if (hash !== location.hash) {
    if (editing) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
    editing = !commit;
  } else if (commit) {
    editing = false;
  }
}

function setSpec(spec, { commit }) {
  store.set({ spec });
  syncUrl(commit);
}

function setView(view) {
  if (store.get().view === view) return;
  store.set({ view });
  syncUrl(true);
}

function setPins(pins) {
  store.set({ pins });
  syncUrl(true);
}

function linkBanner(ignored) {
  return ignored.length ? { title: 'Parts of this link could not be read and were ignored:', items: ignored } : null;
}

// A search the link asked for (q=), run once the Search tab is mounted.
let linkedSearch = false;

function readHash() {
  const current = store.get();
  const catalog = current.catalog;
  const { state, ignored, view, pins, search } = decode(location.hash, catalog);
  const specChanged = !current.spec || encode(state, catalog) !== encode(current.spec, catalog);
  if (specChanged) store.set({ spec: state, localErrors: {} });
  const pinText = (list) => list.map((pin) => `${pin.name ?? ''}\t${encode(pin, catalog)}`).join('\n');
  if (pinText(pins) !== pinText(current.pins)) store.set({ pins });
  if (view !== current.view) store.set({ view });
  // A link's search runs when it is not the one last run on this spec.
  if (search && (specChanged || !current.searchQuery || encodeSearch(search) !== encodeSearch(current.searchQuery))) {
    store.set({ searchInputs: search, searchQuery: search, searchSystem: null });
    linkedSearch = true;
  } else if (!search && current.searchQuery) {
    store.set({ searchQuery: null });  // the link is the state: no q, no search in it
  }
  store.set({ banner: linkBanner(ignored) });
  const canonical = pageHash();
  if (canonical !== location.hash) history.replaceState(null, '', canonical);
  editing = false;
  runLinkedSearch();
}

function runLinkedSearch() {
  const form = document.getElementById('search-form');
  if (!linkedSearch || !form?.isConnected || !form.requestSubmit) return;
  linkedSearch = false;
  form.requestSubmit();
}

// A config document (a search row, an import) into the calculator; returns
// what the page could not represent. The spec is made canonical (defaults
// dropped), as a link to it would read. The importer's notes and what was
// ignored stay on the page as a banner until dismissed.
function applyConfig(document, source, notes = []) {
  const { catalog } = store.get();
  const { spec, ignored, tokens } = fromConfig(document, catalog);
  const canonical = decode(encode(spec, catalog), catalog).state;
  canonical.tokens = tokens ?? store.get().spec.tokens;
  setSpec(canonical, { commit: true });
  const items = [...notes, ...ignored.map((text) => `ignored: ${text}`)];
  store.set({ banner: items.length ? { title: `Imported from ${source}:`, items, kind: ignored.length ? 'warn' : 'notes' } : null });
  return ignored;
}

function loadConfig(document) {
  applyConfig(document, 'the search');
  setView('calc');
  window.scrollTo({ top: 0 });
}

function pinSpec(spec) {
  const { pins, catalog } = store.get();
  if (pins.length >= MAX_PINS) return false;
  const text = encode(spec, catalog);
  if (!pins.some((pin) => encode(pin, catalog) === text)) setPins([...pins, cloneSpec(spec)]);
  return true;
}

function pinConfig(document) {
  const { catalog, spec } = store.get();
  const pinned = decode(encode(fromConfig(document, catalog).spec, catalog), catalog).state;
  pinned.tokens = spec.tokens;
  return pinSpec(pinned);
}

// The Search tab with one system figure scaled (What-if's shortcut).
function searchScaled(figure, factor) {
  store.set({ searchSystem: { label: `${figureLabel(figure)} × ${factor}`, figure, factor } });
  setView('search');
  document.getElementById('search-form')?.requestSubmit();
}

// The calculator's system with one figure scaled, as the core's what-if
// scales it (the scale_system op); resolves with its envelope.
function scaleSystem(spec, { figure, factor }) {
  return engine.run('scale_system', JSON.stringify({ system: toConfig(spec).system, figure, factor }));
}

let firstResult = true;
let estimateWaiters = [];
// Resolves with {result, errors} once the next estimate has come back.
function whenEstimated() {
  return new Promise((resolve) => { estimateWaiters.push(resolve); });
}

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
  const waiters = estimateWaiters;
  estimateWaiters = [];
  for (const resolve of waiters) resolve({ result: store.get().result, errors: store.get().errors });
  if (firstResult && envelope.ok) {
    firstResult = false;
    performance.mark('trainsim:first-result');
  }
}

// "Find a plan that fits": the Search tab with this model, system and GPU
// count (the search reads model and system from the calculator), run at once.
function findPlan() {
  const { spec, catalog, searchInputs } = store.get();
  const gpus = effectiveSection(spec, 'system', catalog).num_gpus;
  store.set({ searchInputs: { ...searchInputs, gpus: gpus ? String(gpus) : searchInputs.gpus } });
  setView('search');
  document.getElementById('search-form')?.requestSubmit();
}

function applySuggestion(set) {
  const { spec, missing } = applySet(store.get().spec, set);
  if (missing.length) return false;
  setSpec(spec, { commit: true });
  return true;
}

// Takes the reader to a form field (opening its group and, on a phone, the form).
function focusField(target) {
  panes.show('form');
  target.closest('details')?.setAttribute('open', '');
  target.scrollIntoView({ block: 'center' });
  target.querySelector('input, select')?.focus({ preventScroll: true });
}

export async function start(startedEngine) {
  engine = startedEngine;
  const dialogs = document.getElementById('dialogs');
  let imports = null;
  let exports = null;
  let runs = null;
  const actions = {
    setSpec, setView, applyConfig, loadConfig, pinConfig,
    pinCurrent: () => pinSpec(store.get().spec),
    unpin: (i) => setPins(store.get().pins.filter((_, k) => k !== i)),
    renamePin: (i, name) => setPins(store.get().pins.map((pin, k) => {
      if (k !== i) return pin;
      const copy = cloneSpec(pin);
      if (name) copy.name = name;
      else delete copy.name;
      return copy;
    })),
    openPin: (i) => {
      const spec = cloneSpec(store.get().pins[i]);
      delete spec.name;
      setSpec(spec, { commit: true });
      setView('calc');
    },
    // The inputs of a search that runs go into the link (q=).
    runSearch: (document, inputs) => {
      store.set({ searchQuery: inputs });
      syncUrl(true);
      return runs.runSearch(document);
    },
    cancelSearch: () => runs.cancelSearch(),
    searchScaled, scaleSystem,
    engine: (op, arg) => engine.run(op, arg),
    openImport: () => imports.open(),
    openExport: () => exports.open(),
    findPlan, applySuggestion, unknownKeys, focusField, whenEstimated,
    setEdited: (path) => { if (store.get().edited !== path) store.set({ edited: path }); },
  };
  banner.mount(document.getElementById('banner'), store);
  toolbar.mount(document.getElementById('toolbar'), store, actions);
  configForm.mount(document.getElementById('config'), store, actions);
  panes.mount(document.getElementById('view-calc'), store);
  summary.mount(document.getElementById('summary'), store, actions);
  memoryChart.mount(document.getElementById('memory'), store, actions);
  memoryTimeline.mount(document.getElementById('memory-timeline'), store);
  timeBreakdown.mount(document.getElementById('time'), store, actions);
  opsTable.mount(document.getElementById('ops'), store);
  throughput.mount(document.getElementById('throughput'), store, actions);
  timeline.mount(document.getElementById('timeline'), store);
  imports = importDialog.mount(dialogs, store, actions);
  exports = exportDialog.mount(dialogs, store, actions);
  explain.mount(dialogs, store);

  let catalog;
  try {
    catalog = await engine.catalog();
  } catch (error) {
    store.set({ status: 'failed', failure: error.message });
    document.body.dataset.status = 'failed';
    return;
  }
  document.getElementById('version').textContent = `trainsim ${catalog.version}`;
  const unknown = installSchema(catalog.schema);
  if (unknown.length) console.warn(`trainsim: the core's schema does not describe ${unknown.join(', ')}`);
  store.subscribe((state, previous) => { if (state.spec !== previous.spec) estimate(state.spec); });
  store.set({ catalog });
  readHash();
  // The other tabs are built once the catalog and the first spec are known.
  searchPanel.mount(document.getElementById('search-panel'), store, actions);
  searchResults.mount(document.getElementById('search-results'), store, actions);
  searchScatter.mount(document.getElementById('search-scatter-panel'), store, actions);
  whatif.mount(document.getElementById('view-whatif'), store, actions);
  compare.mount(document.getElementById('view-compare'), store, actions);
  tabs.mount(document.getElementById('tabs'), store, actions);
  runs = startRuns(engine, store);
  runLinkedSearch();
  window.addEventListener('hashchange', readHash);
}
