// What the page needs from the core before it can show anything: the
// version, the presets (listed, then each one's document) and the schema
// of the config and search documents. call(op, input) -> parsed envelope
// (the engine client's, or the module's own under node in the tests);
// version: Module.version().
export async function loadCatalog(call, version) {
  const [listing, schema] = await Promise.all([call('presets', ''), call('schema', '')]);
  if (!listing?.ok) throw new Error('the engine could not list its presets');
  if (!schema?.ok) throw new Error('the engine could not describe its config (schema)');
  const load = (entries) => Promise.all(entries.map(async ({ id, label, aliases }) => {
    const envelope = await call('preset', id);
    return { id, label, aliases: aliases ?? [], doc: envelope?.ok ? envelope.result : null };
  }));
  const [models, systems] = await Promise.all([load(listing.result.models), load(listing.result.systems)]);
  return { version, models, systems, schema: schema.result };
}
