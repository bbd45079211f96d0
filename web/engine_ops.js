// The operations the page asks of the WASM module. Shared by the worker and
// the in-page fallback; the module returns envelope text, parsed here.
export function runOp(module, op, arg) {
  switch (op) {
    case 'estimate':
      return JSON.parse(module.estimate(arg));
    case 'catalog':
      return catalog(module);
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
