// The page's handle on the core. The WASM module runs in a Worker
// (worker.js); if module workers are unavailable it runs in the page.
// Every call is Module.call(op, input) with the core's op names and text
// inputs (ops.js); answers are envelopes, parsed here.
// estimate() and whatif() keep at most one request in flight and one
// pending: a newer request replaces the pending one, and a result that a
// newer request has overtaken resolves as {superseded: true} (the newest
// request wins). search is paged (search_pages.js); run(op, input) is for
// one-off calls (imports, exports, pinned configs, scale_system).
import { pageModules } from './ops.js';
import { loadCatalog } from './catalog.js';
import { pagedSearch } from './search_pages.js';

function workerBackend() {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const waiting = new Map();
  let nextId = 1;
  let broken = null;
  const fail = (message) => {
    broken = message;
    for (const { reject } of waiting.values()) reject(new Error(message));
    waiting.clear();
  };
  worker.addEventListener('message', ({ data }) => {
    const entry = waiting.get(data.id);
    if (!entry) return;
    waiting.delete(data.id);
    if (data.ok) entry.resolve(data.value);
    else entry.reject(new Error(data.error));
  });
  worker.addEventListener('error', (event) => fail(event.message || 'the engine worker failed to load'));
  const call = (op, input) => new Promise((resolve, reject) => {
    if (broken) { reject(new Error(broken)); return; }
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, op, input });
  });
  call.terminate = () => {
    worker.terminate();
    fail('the worker was stopped');
  };
  return call;
}

function inPageBackend() {
  const modules = pageModules();
  return (op, input) => modules.run(op, input);
}

// Extra workers for the search (started on first use): one per spare core,
// at most three, so a search on a 4-core machine runs on all four.
function helperCount() {
  const cores = Number(globalThis.navigator?.hardwareConcurrency) || 2;
  return Math.max(1, Math.min(3, cores - 1));
}

export function createEngine() {
  let call = null;
  let workers = true;
  try {
    call = workerBackend();
  } catch {
    call = inPageBackend();
    workers = false;
  }
  let helpers = null;
  let helperWorkers = [];
  const stopHelpers = () => {
    for (const helper of helperWorkers) helper.terminate();
    helperWorkers = [];
    helpers = null;
  };
  const searchCalls = () => {
    if (!helpers) {
      helpers = [];
      if (workers) {
        try {
          for (let i = 0; i < helperCount(); i += 1) {
            const helper = workerBackend();
            helperWorkers.push(helper);
            // A helper that fails hands its work back to the main worker
            // (unless it was stopped: then the search is over).
            const guarded = (op, input) => helper(op, input).catch((error) => {
              if (!helperWorkers.includes(helper)) throw error;
              helpers = helpers.filter((h) => h !== guarded);
              return call(op, input);
            });
            helpers.push(guarded);
          }
        } catch {
          helpers = [];
        }
      }
    }
    return [(op, input) => call(op, input), ...helpers];
  };
  // The first call decides: if the worker cannot start, switch to the page.
  const first = (op, input) => call(op, input).catch((error) => {
    call = inPageBackend();
    workers = false;
    console.warn(`trainsim: running the engine in the page (${error.message})`);
    return call(op, input);
  });
  const parsed = async (op, input) => JSON.parse(await call(op, input));
  return {
    catalog: async () => {
      const version = await first('version');
      return loadCatalog(parsed, version);
    },
    estimate: newestWins((text) => parsed('estimate', text)),
    whatif: newestWins((text) => parsed('whatif', text)),
    search: pagedSearch(searchCalls, stopHelpers),
    // Starts the search workers ahead of a search (the Search tab is open).
    warmSearch: () => Promise.all(searchCalls().map((c) => c('ready').catch(() => false))),
    // One-off calls (imports, exports, pinned configs): every answer counts.
    run: parsed,
  };
}

// Wraps an async estimate(text) so that at most one request is in flight and
// one is pending; older requests resolve as {superseded: true}.
export function newestWins(run) {
  let inFlight = null;
  let pending = null;
  function pump() {
    if (inFlight || !pending) return;
    inFlight = pending;
    pending = null;
    const request = inFlight;
    run(request.text).then(
      (envelope) => finish(request, () => request.resolve(envelope)),
      (error) => finish(request, () => request.reject(error)),
    );
  }
  function finish(request, settle) {
    inFlight = null;
    if (pending) request.resolve({ superseded: true });
    else settle();
    pump();
  }
  return (config) => {
    if (pending) pending.resolve({ superseded: true });
    return new Promise((resolve, reject) => {
      pending = { text: JSON.stringify(config), resolve, reject };
      pump();
    });
  };
}
