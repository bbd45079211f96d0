// A strategy search run in pages, so the page can show progress, cancel,
// and use several workers: a first page tells how many candidates there
// are, the rest is split into pages that the workers take in turn, and the
// pages are merged at the end in order (exactly the result of one whole
// search, see trainsim.h search_json). Each call has a fixed cost (the core
// enumerates and validates the combinations up to the page's end and fully
// estimates the page's top plans), so pages are not tiny; they are bounded
// too, so that progress moves and a cancel frees the workers soon. The unit is
// the core's layout class (one (tp, pp, cp, ep, etp) shape with all its
// micro-batch sizes and recompute modes), so pages hold a few classes.
// start() cancels the search in progress (the newest request wins): the
// older one resolves {cancelled: true} at once and issues no more pages.
// Progress is reported at once ({done: 0, total: 0} while the first page
// counts the classes), then after every page with the best plan so far.
const FIRST_PAGE = 16;
const MIN_PAGE = 8;
const MAX_PAGE = 128;
const MIN_PAGES = 4;

// Splits [from, total) into pages for `workers` workers: at least MIN_PAGES
// (for the progress bar) and two per worker, none under MIN_PAGE, none over
// MAX_PAGE.
export function splitPages(from, total, workers) {
  const remaining = total - from;
  if (remaining <= 0) return [];
  const wanted = Math.max(MIN_PAGES, 2 * workers, Math.ceil(remaining / MAX_PAGE));
  const count = Math.max(1, Math.min(wanted, Math.ceil(remaining / MIN_PAGE)));
  const size = Math.ceil(remaining / count);
  const pages = [];
  for (let offset = from; offset < total; offset += size) pages.push({ offset, limit: Math.min(size, total - offset) });
  return pages;
}

// One page of a search: {ok, end, candidates, best: the page's first plan,
// text: the page's envelope, for the merge}, or the error envelope.
async function searchPage(call, document, offset, limit) {
  const text = await call('search', JSON.stringify({ ...document, page: { offset, limit } }));
  const envelope = JSON.parse(text);
  if (!envelope.ok) return envelope;
  const page = envelope.result.page;
  return { ok: true, end: page.end, candidates: page.candidates, best: envelope.result.top?.[0] ?? null, text };
}

// The objective's figure of a plan, lower is better (see the core's rank.h;
// ties, broken there by peak memory and index, keep the earlier plan here).
function cost(entry, objective) {
  const m = entry?.metrics ?? {};
  const value = {
    tokens_per_s_per_gpu: -m.tokens_per_s_per_gpu,
    time_to_train: m.time_to_train_s,
    gpu_hours: m.gpu_hours,
  }[objective] ?? m.iteration_s;
  return Number.isFinite(value) ? value : Infinity;
}

// The better of two plans (either may be null) for the search's objective.
export function betterPlan(a, b, objective) {
  if (!a) return b ?? null;
  if (!b) return a;
  return cost(b, objective) < cost(a, objective) ? b : a;
}

// calls(): the workers' call(op, input) functions (-> envelope text), the
// first one the main engine worker. stopHelpers(): ends the other workers' current work (an
// explicit cancel; they are started again on the next search).
export function pagedSearch(calls, stopHelpers = () => {}) {
  let current = null;

  function cancel({ hard = false } = {}) {
    if (!current) return;
    current.cancelled = true;
    current.stop();
    current = null;
    if (hard) stopHelpers();
  }

  // onProgress({done, total, best}) at once and after every page (done and
  // total in layout classes, total 0 until the first page has counted them;
  // best: the best plan of the pages so far, a search entry, or null);
  // resolves with the merged envelope, an error envelope, or {cancelled: true}.
  async function start(document, onProgress = () => {}) {
    cancel();
    const job = { cancelled: false, stop: null };
    const stopped = new Promise((resolve) => { job.stop = () => resolve({ cancelled: true }); });
    current = job;
    const work = run(job, document, onProgress);
    work.catch(() => {});  // after a cancel, a stopped worker's error is nobody's
    try {
      return await Promise.race([work, stopped]);
    } finally {
      if (current === job) current = null;
    }
  }

  async function run(job, document, onProgress) {
    const workers = calls();
    onProgress({ done: 0, total: 0, best: null });
    const first = await searchPage(workers[0], document, 0, FIRST_PAGE);
    if (!first.ok || job.cancelled) return first;
    const total = first.candidates;
    const pages = [{ offset: 0, end: first.end, text: first.text }];
    let done = first.end;
    let failed = null;
    let best = first.best;
    onProgress({ done, total, best });
    const queue = splitPages(first.end, total, workers.length);
    await Promise.all(workers.map(async (call) => {
      while (queue.length && !job.cancelled && !failed) {
        const { offset, limit } = queue.shift();
        const page = await searchPage(call, document, offset, limit);
        if (!page.ok) { failed = page; return; }
        pages.push({ offset, end: page.end, text: page.text });
        done += page.end - offset;
        best = betterPlan(best, page.best, document.objective);
        if (!job.cancelled) onProgress({ done, total, best });
      }
    }));
    if (job.cancelled) return { cancelled: true };
    if (failed) return failed;
    pages.sort((a, b) => a.offset - b.offset);
    const gap = pages.find((page, i) => i > 0 && page.offset !== pages[i - 1].end);
    if (gap || pages[pages.length - 1].end !== total) {
      return { ok: false, errors: [{ path: '/page', message: 'the search pages do not cover every candidate' }] };
    }
    return JSON.parse(await workers[0]('search_merge', `{"pages":[${pages.map((page) => page.text).join(',')}]}`));
  }

  return { start, cancel, running: () => current !== null };
}
