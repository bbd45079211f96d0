// The page's handle on the core. The WASM module runs in a Worker
// (engine_worker.js); if module workers are unavailable it runs in the page.
// estimate() keeps at most one request in flight and one pending: a newer
// request replaces the pending one, and a result that a newer request has
// overtaken resolves as {superseded: true} (the newest request wins).
import { runOp } from './engine_ops.js';

function workerBackend() {
  const worker = new Worker(new URL('./engine_worker.js', import.meta.url), { type: 'module' });
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
  return (op, arg) => new Promise((resolve, reject) => {
    if (broken) { reject(new Error(broken)); return; }
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, op, arg });
  });
}

function inPageBackend() {
  const module = import('./trainsim_web.mjs').then((m) => m.default());
  return async (op, arg) => runOp(await module, op, arg);
}

export function createEngine() {
  let call = null;
  try {
    call = workerBackend();
  } catch {
    call = inPageBackend();
  }
  // The first call decides: if the worker cannot start, switch to the page.
  const first = (op, arg) => call(op, arg).catch((error) => {
    call = inPageBackend();
    console.warn(`trainsim: running the engine in the page (${error.message})`);
    return call(op, arg);
  });
  return { catalog: () => first('catalog'), estimate: newestWins((text) => call('estimate', text)) };
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
