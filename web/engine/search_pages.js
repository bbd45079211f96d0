// A strategy search run in pages, so the page can show progress, cancel,
// and use several workers. A first call ({"plan": true}) counts the layout
// classes (one (tp, pp, cp, ep, etp) shape with all its micro-batch sizes and
// recompute modes) and orders them by their floors, best first; the classes
// are then searched in that order in pages, each page with the bound of the
// pages done so far (their top K metrics and Pareto front: the core skips
// what they already exclude, as one whole search does from class to class),
// and the pages are merged at the end (exactly the result of one whole
// search, see trainsim.h search_json and search_merge_json). The first page
// runs alone so that the others start with a bound; pages then grow (the
// later classes have the worse floors and are mostly skipped), bounded so
// that progress moves and a cancel frees the workers soon. Before the merge,
// the full results of top plans that cannot enter the merged top K are
// dropped (each is ~40 KB; the merge reads at most 4 MiB).
// start() cancels the search in progress (the newest request wins): the
// older one resolves {cancelled: true} at once and issues no more pages.
// Progress is reported at once ({done: 0, total: 0} while the plan counts
// the classes), then after every page with the best plan so far.
const FIRST_PAGE = 16;
const MAX_PAGE = 256;
const MIN_PAGES = 4;

// Splits the ordered classes after the first `from` into pages for
// `workers` workers: sizes double from FIRST_PAGE up to MAX_PAGE, and there
// are at least MIN_PAGES and two per worker where the classes allow.
export function splitPages(classes, from, workers) {
  const remaining = classes.length - from;
  if (remaining <= 0) return [];
  const wanted = Math.max(MIN_PAGES, 2 * workers);
  const cap = Math.max(1, Math.min(MAX_PAGE, Math.ceil(remaining / wanted)));
  const pages = [];
  let size = Math.min(FIRST_PAGE, cap);
  for (let offset = from; offset < classes.length; offset += size, size = Math.min(cap, 2 * size)) {
    pages.push(classes.slice(offset, offset + size));
  }
  return pages;
}

// One call of a search: {ok, result: the parsed result} or the error envelope.
async function searchCall(call, document, page) {
  const envelope = JSON.parse(await call('search', JSON.stringify({ ...document, page })));
  return envelope.ok ? { ok: true, result: envelope.result } : envelope;
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
    const plan = await searchCall(workers[0], document, { plan: true });
    if (!plan.ok || job.cancelled) return plan;
    const order = plan.result.order?.classes ?? [];
    const total = order.length;
    // No layout class at all: the whole search answers at once, with its counts and hints.
    if (!total) return searchCall(workers[0], document, undefined);
    const bound = pageBound(document);
    const pages = [];
    let done = 0;
    let failed = null;
    const finish = (result, size) => {
      pages.push(result);
      bound.add(result);
      done += size;
      if (!job.cancelled) onProgress({ done, total, best: bound.best() });
    };
    onProgress({ done, total, best: null });
    // The best-floor classes first and alone: the other pages start with their bound.
    const firstClasses = order.slice(0, FIRST_PAGE);
    const first = await searchCall(workers[0], document, { classes: firstClasses });
    if (!first.ok || job.cancelled) return first;
    finish(first.result, firstClasses.length);
    const queue = splitPages(order, firstClasses.length, workers.length);
    await Promise.all(workers.map(async (call) => {
      while (queue.length && !job.cancelled && !failed) {
        const classes = queue.shift();
        const page = await searchCall(call, document, { classes, bound: bound.json() });
        if (!page.ok) { failed = page; return; }
        finish(page.result, classes.length);
      }
    }));
    if (job.cancelled) return { cancelled: true };
    if (failed) return failed;
    bound.trim(pages);
    return JSON.parse(await workers[0]('search_merge', JSON.stringify({ pages })));
  }

  return { start, cancel, running: () => current !== null };
}

// The keys of a metrics object a bound's top takes (search_request.cpp read_bound).
const BOUND_METRICS = ['iteration_s', 'peak_bytes', 'tokens_per_s_per_gpu', 'mfu', 'time_to_train_s', 'gpu_hours'];

// What the pages done so far proved: their best top_k plans' metrics and
// their Pareto front (peak memory against step time), as the core reads a
// page's "bound"; the best plan so far for the progress.
export function pageBound(document) {
  const objective = document.objective;
  const k = Number(document.top_k) || 10;
  let top = [];    // entries, best first, at most k
  let front = [];  // [peak_bytes, iteration_s], ascending peak, descending time
  return {
    add(result) {
      top = [...top, ...(result.top ?? [])].map((entry, i) => [entry, i])
        .sort(([a, i], [b, j]) => cost(a, objective) - cost(b, objective) || i - j)
        .slice(0, k).map(([entry]) => entry);
      const points = [...front, ...(result.pareto ?? []).map((e) => [e.metrics.peak_bytes, e.metrics.iteration_s])]
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      front = [];
      for (const point of points) if (!front.length || point[1] < front[front.length - 1][1]) front.push(point);
    },
    best: () => top[0] ?? null,
    json: () => ({
      top: top.map((entry) => Object.fromEntries(BOUND_METRICS.filter((key) => Number.isFinite(entry.metrics?.[key])).map((key) => [key, entry.metrics[key]]))),
      front,
    }),
    // Drops from each page's top the plans that rank after the merged k-th
    // (their full results are most of a page's size; the merge would not keep
    // them). With diversity (one plan per layout) the pages are left whole.
    trim(pages) {
      if (document.diversity && document.diversity !== 'none') return;
      if (top.length < k) return;
      const last = cost(top[top.length - 1], objective);
      for (const page of pages) if (page.top) page.top = page.top.filter((entry) => cost(entry, objective) <= last);
    },
  };
}
