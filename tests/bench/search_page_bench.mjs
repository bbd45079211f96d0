// Strategy search speed in the page (figures go to README, never a pass/fail
// test): serves a built site, opens a search link in headless Chromium (the
// search's inputs live in the link, so opening it runs the search) and
// reports, per run: the time from the search's start to its result (the
// page's own clock, store.search.elapsedMs) and from navigation to the
// result, the search workers the page used, the layout classes and
// candidates searched, the main thread's JS heap (CDP Performance.getMetrics;
// the workers' heaps and WebAssembly memory are not in it) and the peak
// resident memory of the renderer process, which holds the page, its workers
// and their WebAssembly memories (VmHWM in /proc, Linux only), and that
// renderer's peak with the page open and no search, first.
//   node tests/bench/search_page_bench.mjs --site BUILD/wasm/site [--runs N] [--hash '#v=1&...'] [--cores N]
// Default link: DeepSeek-V3 on 1024 H100 with uneven first/last stages (the
// issue-16 page target, < 10 s and < 128 MiB), the Search form's defaults
// otherwise. --cores N: the navigator.hardwareConcurrency the page sees (it
// starts one search worker per core, at most four). Needs tests/browser's
// node_modules (npm ci there) and Chromium (TRAINSIM_CHROMIUM, default
// /usr/bin/chromium). Prints `uptime` before and after: on a shared machine
// the wall times depend on the load.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newBrowser } from '../browser/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const DEFAULT_HASH = '#v=1&m=deepseek-v3&s=h100-sxm-80gb&n=1024&seq=4096&gbs=4096&view=search&q=n:1024;u:1';

function parse(argv) {
  const args = { site: '', runs: 3, hash: DEFAULT_HASH, cores: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args) || argv[i + 1] === undefined) {
      throw new Error("usage: node search_page_bench.mjs --site SITE_DIR [--runs N] [--hash '#v=1&...'] [--cores N]");
    }
    args[key] = key === 'runs' || key === 'cores' ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.site || !fs.existsSync(path.join(args.site, 'index.html')) || !(args.runs >= 1)) {
    throw new Error('usage: --site must name a built site (BUILD/wasm/site with index.html)');
  }
  return args;
}

// Serves the site with web/serve.sh on a free port; resolves {url, stop}.
function serve(site) {
  const server = spawn(path.join(root, 'web/serve.sh'), ['--port', '0'], {
    env: { ...process.env, TRAINSIM_SITE_DIR: site }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const seen = (chunk) => {
      out += chunk;
      const match = /http:\/\/localhost:(\d+)\//.exec(out);
      if (match) resolve({ url: `http://127.0.0.1:${match[1]}/`, stop: () => server.kill() });
    };
    server.stdout.on('data', seen);
    server.stderr.on('data', seen);
    server.on('exit', (code) => reject(new Error(`the server stopped (${code}): ${out}`)));
  });
}

// Every descendant process of `pid` whose command line has --type=renderer.
function renderers(pid) {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch { /* gone */ }
  }
  const out = [];
  const walk = (p) => {
    for (const child of children.get(p) ?? []) {
      try {
        if (fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('--type=renderer')) out.push(child);
      } catch { /* gone */ }
      walk(child);
    }
  };
  walk(pid);
  return out;
}

// Peak and current resident memory (MiB) of a process, from /proc.
function residentMib(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { peak: kib('VmHWM') / 1024, now: kib('VmRSS') / 1024 };
  } catch {
    return { peak: 0, now: 0 };
  }
}

const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

// The peak resident memory (MiB) of the browser's largest renderer so far.
function rendererPeakMib(browser) {
  return Math.max(0, ...renderers(browser.process?.()?.pid ?? 0).map((pid) => residentMib(pid).peak));
}

async function once(browser, url, args) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  if (args.cores > 0) {
    await context.addInitScript((cores) => {
      Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => cores });
      if (typeof WorkerNavigator !== 'undefined') Object.defineProperty(WorkerNavigator.prototype, 'hardwareConcurrency', { get: () => cores });
    }, args.cores);
  }
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const started = Date.now();
  await page.goto(`${url}${args.hash}`);
  let jsHeapPeak = 0;
  const sample = async () => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    const used = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0;
    jsHeapPeak = Math.max(jsHeapPeak, used);
  };
  let status = '';
  while (!['done', 'invalid', 'failed', 'cancelled'].includes(status)) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sample().catch(() => {});
    status = await page.evaluate(() => document.getElementById('search-status')?.dataset.status ?? '').catch(() => '');
    if (Date.now() - started > 600000) throw new Error('no result after 10 minutes');
  }
  const navigationMs = Date.now() - started;
  const result = await page.evaluate(async () => {
    const { store } = await import('./state/store.js');
    const { search } = store.get();
    const r = search.envelope?.result;
    return {
      status: search.status, elapsedMs: search.elapsedMs,
      classes: r?.counts?.layout_classes, considered: r?.counts?.considered, top: r?.top?.[0]?.label ?? r?.top?.[0]?.index,
      cores: navigator.hardwareConcurrency, error: search.envelope?.errors?.[0]?.message,
    };
  });
  const workers = page.workers().length;
  const rendererPeak = rendererPeakMib(browser);
  await context.close();
  return { ...result, navigationMs, workers, jsHeapPeak, rendererPeakMib: rendererPeak };
}

// The renderer with no search: the same link without its search (the calculator
// view, its first estimate shown), so a search's own memory is the difference.
async function baseline(browser, url, args) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${url}${args.hash.replace(/&view=search.*$/, '')}`);
  await page.waitForFunction(() => document.body.dataset.status === 'ready' && Number(document.body.dataset.estimates ?? 0) > 0,
    null, { timeout: 60000 });
  const peak = rendererPeakMib(browser);
  await context.close();
  return peak;
}

async function main() {
  const args = parse(process.argv.slice(2));
  console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  const server = await serve(path.resolve(args.site));
  // A browser of its own per run, so each renderer's peak memory is that run's.
  try {
    const idle = await newBrowser();
    try {
      console.log(`renderer peak RSS with the page open and no search: ${(await baseline(idle, server.url, args)).toFixed(0)} MiB`);
    } finally {
      await idle.close();
    }
    const runs = [];
    for (let i = 0; i < args.runs; i += 1) {
      const browser = await newBrowser();
      try {
        const run = await once(browser, server.url, args);
        runs.push(run);
        console.log(`run ${i + 1}: ${run.status} in ${(run.elapsedMs / 1000).toFixed(2)} s (navigation to result ${(run.navigationMs / 1000).toFixed(2)} s), `
          + `${run.workers} workers (hardwareConcurrency ${run.cores}), ${run.classes} layout classes, ${run.considered} candidates, `
          + `main-thread JS heap peak ${mib(run.jsHeapPeak)} MiB, renderer peak RSS ${run.rendererPeakMib.toFixed(0)} MiB${run.error ? `, error: ${run.error}` : ''}`);
      } finally {
        await browser.close();
      }
    }
    const times = runs.map((r) => r.elapsedMs).sort((a, b) => a - b);
    console.log(`search in the page: median ${(times[Math.floor(times.length / 2)] / 1000).toFixed(2)} s of ${runs.map((r) => (r.elapsedMs / 1000).toFixed(2)).join(', ')} s; `
      + `renderer peak RSS max ${Math.max(...runs.map((r) => r.rendererPeakMib)).toFixed(0)} MiB`);
  } finally {
    server.stop();
    console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
