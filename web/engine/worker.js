// The Web Worker that runs the WASM core, so the page never blocks on it.
// Messages in: {id, op, input}; out: {id, ok, value} (the envelope text) or
// {id, ok: false, error}.
import createTrainsim from '../trainsim_web.mjs';
import { runOp } from './ops.js';

let ready = createTrainsim();

self.onmessage = async ({ data }) => {
  try {
    const module = await ready;
    self.postMessage({ id: data.id, ok: true, value: runOp(module, data.op, data.input) });
  } catch (error) {
    // A trap or abort leaves the module unusable: start a fresh one.
    if (error instanceof WebAssembly.RuntimeError || /abort/i.test(String(error?.message))) ready = createTrainsim();
    self.postMessage({ id: data.id, ok: false, error: String(error?.message ?? error) });
  }
};
