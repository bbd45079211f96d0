// The page's one way into the WASM modules: Module.call(op, input) -> the
// envelope text (the op names and their inputs are the core's, see
// core/include/trainsim/trainsim.h and the `schema` op). Shared by the
// workers and the in-page fallback; the client parses the text.
// The page has two modules: trainsim_web answers every op but the imports and
// the Megatron export, which trainsim_interop answers; that one is loaded on
// the first call that needs it, so the first download leaves it out.
// Besides the core's ops, a worker answers two of its own: 'version'
// (Module.version()) and 'ready' (the page's module has loaded).
export const INTEROP_OPS = new Set(['import_hf', 'import_megatron', 'import_simumax', 'export_megatron']);

// loadPage() and loadInterop() each return a promise of a created module.
export function moduleSet(loadPage, loadInterop) {
  let page = loadPage();
  let interop = null;
  const interopModule = () => {
    // A failed download is tried again on the next call.
    interop ??= loadInterop().catch((error) => {
      interop = null;
      throw error;
    });
    return interop;
  };
  return {
    async run(op, input) {
      if (op === 'ready') {
        await page;
        return true;
      }
      const module = await (INTEROP_OPS.has(op) ? interopModule() : page);
      if (op === 'version') return module.version();
      return module.call(op, typeof input === 'string' ? input : '');
    },
    // A trap or abort leaves a module unusable: the next calls get fresh ones.
    reset() {
      page = loadPage();
      interop = null;
    },
  };
}
