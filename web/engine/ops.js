// The page's one way into the WASM modules: Module.call(op, input) -> the
// envelope text (the op names and their inputs are the core's, see
// core/include/trainsim/trainsim.h and the `schema` op). Shared by the
// workers and the in-page fallback; the client parses the text.
// The page has two modules: trainsim_web answers the calculator's ops and
// trainsim_tools the tools' (search, what-if, imports, Megatron export, the
// step trace); that one is loaded on the first call that needs it, so the
// first download leaves it out.
// Besides the core's ops, a worker answers two of its own: 'version'
// (Module.version()) and 'ready' (the page's module has loaded).
export const TOOL_OPS = new Set(['search', 'search_merge', 'whatif', 'scale_system',
  'import_hf', 'import_megatron', 'import_simumax', 'match_model_preset', 'export_megatron', 'allocation_trace', 'trace']);

// The page's modules (each worker and the in-page fallback hold their own):
// the calculator's starts loading at once, the tools' on first use.
export function pageModules() {
  return moduleSet(
    () => import('../trainsim_web.mjs').then((m) => m.default()),
    () => import('../trainsim_tools.mjs').then((m) => m.default()),
  );
}

// loadPage() and loadTools() each return a promise of a created module.
function moduleSet(loadPage, loadTools) {
  let page = loadPage();
  let tools = null;
  const toolsModule = () => {
    // A failed download is tried again on the next call.
    tools ??= loadTools().catch((error) => {
      tools = null;
      throw error;
    });
    return tools;
  };
  return {
    async run(op, input) {
      if (op === 'ready') {
        await page;
        return true;
      }
      const module = await (TOOL_OPS.has(op) ? toolsModule() : page);
      if (op === 'version') return module.version();
      return module.call(op, typeof input === 'string' ? input : '');
    },
    // A trap or abort leaves a module unusable: the next calls get fresh ones.
    reset() {
      page = loadPage();
      tools = null;
    },
  };
}
