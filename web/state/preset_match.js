// Whether an imported model is one of the presets: both are made canonical by
// the core (export_config writes every key with its default) and compared
// without their names, so an import of Llama 3 8B's config.json selects the
// "llama3-8b" preset instead of a custom model.
const PROBE_TRAINING = { seq_len: 128, micro_batch_size: 1, global_batch_size: 1 };

function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted(value[key])]));
}

async function canonicalModel(engine, model, system) {
  let envelope;
  try {
    envelope = await engine('export_config', JSON.stringify({ model, training: PROBE_TRAINING, system: { preset: system, num_gpus: 1 } }));
  } catch {
    return null;
  }
  if (!envelope?.ok) return null;
  const { name: _name, ...rest } = envelope.result.config.model;
  return JSON.stringify(sorted(rest));
}

const presetCache = new Map();  // preset id -> Promise of its canonical text

// The id of the model preset equal to `model` (a config's model section), or null.
export async function matchingPreset(engine, catalog, model) {
  if (model === null || typeof model !== 'object' || Array.isArray(model) || model.preset !== undefined) return null;
  const system = catalog.systems[0]?.id;
  if (!system) return null;
  const mine = await canonicalModel(engine, model, system);
  if (!mine) return null;
  for (const preset of catalog.models) {
    if (!presetCache.has(preset.id)) presetCache.set(preset.id, canonicalModel(engine, { preset: preset.id }, system));
    if (await presetCache.get(preset.id) === mine) return preset.id;
  }
  return null;
}
