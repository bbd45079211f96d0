// The Web Worker that runs the WASM core, so the page never blocks on it.
// Messages in: {id, op, input}; out: {id, ok, value} (the envelope text) or
// {id, ok: false, error}.
import { pageModules } from './ops.js';

const modules = pageModules();

self.onmessage = async ({ data }) => {
  try {
    self.postMessage({ id: data.id, ok: true, value: await modules.run(data.op, data.input) });
  } catch (error) {
    if (error instanceof WebAssembly.RuntimeError || /abort/i.test(String(error?.message))) modules.reset();
    self.postMessage({ id: data.id, ok: false, error: String(error?.message ?? error) });
  }
};
