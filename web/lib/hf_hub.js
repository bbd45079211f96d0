// Fetching a model's config.json from the Hugging Face Hub, on an explicit
// click only (the page's Content-Security-Policy allows exactly this origin).
// Returns {ok: true, text} or {ok: false, message} with what to do next.
export const HUB = 'https://huggingface.co';
const MODEL_ID = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;
const MAX_BYTES = 1 << 20;

export function modelIdProblem(id) {
  if (!MODEL_ID.test(id)) return 'expected a model id such as Qwen/Qwen3-32B (owner/name)';
  return '';
}

export function configUrl(id) {
  return `${HUB}/${id.split('/').map(encodeURIComponent).join('/')}/resolve/main/config.json`;
}

export async function fetchHubConfig(id, { fetchImpl = fetch, timeoutMs = 15000 } = {}) {
  const problem = modelIdProblem(id);
  if (problem) return { ok: false, message: problem };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let response;
  try {
    response = await fetchImpl(configUrl(id), { signal: controller.signal, credentials: 'omit', cache: 'no-cache' });
  } catch {
    return { ok: false, message: `Could not reach huggingface.co (offline, blocked, or no answer within ${timeoutMs / 1000} s). Download ${id}'s config.json yourself and paste it below.` };
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 401 || response.status === 403) {
    return { ok: false, message: `${id} is gated or private on huggingface.co: accept its license there (signed in), download config.json and paste it below.` };
  }
  if (response.status === 404) return { ok: false, message: `huggingface.co has no config.json for ${id}: check the id (owner/name, case matters).` };
  if (!response.ok) return { ok: false, message: `huggingface.co answered ${response.status} for ${id}'s config.json; try again later or paste it below.` };
  const text = await response.text();
  if (text.length > MAX_BYTES) return { ok: false, message: `${id}'s config.json is larger than 1 MiB: not a model config.` };
  return { ok: true, text };
}
