// The page's one way into the WASM module: Module.call(op, input) -> the
// envelope text (the op names and their inputs are the core's, see
// core/include/trainsim/trainsim.h and the `schema` op). Shared by the
// workers and the in-page fallback; the client parses the text.
// Besides the core's ops, a worker answers two of its own: 'version'
// (Module.version()) and 'ready' (the module has loaded).
export function runOp(module, op, input) {
  if (op === 'ready') return true;
  if (op === 'version') return module.version();
  return module.call(op, typeof input === 'string' ? input : '');
}
