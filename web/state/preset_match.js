// Whether an imported model is one of the presets. The core decides (the
// match_model_preset op: equal in every field but the name, defaults spelled
// out), so an import of Llama 3 8B's config.json selects the "llama3-8b"
// preset instead of a custom model.

// {id, label} of the model preset equal to `model` (a config's model
// section written out, not a preset reference), or null (also when the core
// cannot read the model: the import's estimate then names the problem).
export async function matchingPreset(engine, model) {
  if (model === null || typeof model !== 'object' || Array.isArray(model) || model.preset !== undefined) return null;
  let envelope;
  try {
    envelope = await engine('match_model_preset', JSON.stringify({ model }));
  } catch {
    return null;
  }
  const id = envelope?.ok ? envelope.result.preset : null;
  return typeof id === 'string' ? { id, label: envelope.result.label ?? id } : null;
}
