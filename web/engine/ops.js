// The operations the page asks of the WASM module. Shared by the workers
// and the in-page fallback; the module returns envelope text, parsed here.

export function runOp(module, op, arg) {
  switch (op) {
    case 'estimate':
      return JSON.parse(module.estimate(arg));
    case 'catalog':
      return catalog(module);
    case 'whatif':
      return JSON.parse(module.whatif(arg));
    case 'importHf':
      return JSON.parse(module.importHf(arg));
    case 'importMegatron':
      return JSON.parse(module.importMegatron(arg.args, arg.system));
    case 'importSimumax':
      return JSON.parse(module.importSimumax(arg.model, arg.strategy, arg.system));
    case 'exportMegatron':
      return JSON.parse(module.exportMegatron(arg));
    case 'exportConfig':
      return JSON.parse(module.exportConfig(arg));
    case 'exportCsv':
      return JSON.parse(module.exportCsv(arg));
    case 'searchPage':
      return searchPage(module, arg);
    case 'searchMerge':
      return JSON.parse(module.searchMerge(`{"pages":[${arg.join(',')}]}`));
    case 'ready':
      return true;
    default:
      throw new Error(`unknown engine operation "${op}"`);
  }
}

function catalog(module) {
  const listing = JSON.parse(module.presets());
  if (!listing.ok) throw new Error('the engine could not list its presets');
  const load = (entries) => entries.map(({ id, label }) => {
    const envelope = JSON.parse(module.preset(id));
    return { id, label, doc: envelope.ok ? envelope.result : null };
  });
  return { version: module.version(), models: load(listing.result.models), systems: load(listing.result.systems) };
}

// One page of a search (search_pages.js): {text, offset, limit} ->
// {ok, end, candidates, text: the page's envelope, for the merge}, or the
// error envelope.
function searchPage(module, { text, offset, limit }) {
  const document = JSON.parse(text);
  document.page = { offset, limit };
  const pageText = module.search(JSON.stringify(document));
  const envelope = JSON.parse(pageText);
  if (!envelope.ok) return envelope;
  return { ok: true, end: envelope.result.page.end, candidates: envelope.result.page.candidates, text: pageText };
}
