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

// One page of a search: {ok, end, candidates, text: the page's envelope,
// for the merge}, or the error envelope.
async function searchPage(call, document, offset, limit) {
  const text = await call('search', JSON.stringify({ ...document, page: { offset, limit } }));
  const envelope = JSON.parse(text);
  if (!envelope.ok) return envelope;
  return { ok: true, end: envelope.result.page.end, candidates: envelope.result.page.candidates, text };
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

  // onProgress({done, total}) after every page; resolves with the merged
  // envelope, an error envelope, or {cancelled: true}.
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
    const first = await searchPage(workers[0], document, 0, FIRST_PAGE);
    if (!first.ok || job.cancelled) return first;
    const total = first.candidates;
    const pages = [{ offset: 0, end: first.end, text: first.text }];
    let done = first.end;
    let failed = null;
    onProgress({ done, total });
    const queue = splitPages(first.end, total, workers.length);
    await Promise.all(workers.map(async (call) => {
      while (queue.length && !job.cancelled && !failed) {
        const { offset, limit } = queue.shift();
        const page = await searchPage(call, document, offset, limit);
        if (!page.ok) { failed = page; return; }
        pages.push({ offset, end: page.end, text: page.text });
        done += page.end - offset;
        if (!job.cancelled) onProgress({ done, total });
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
