// Shared pieces of the browser tests: launching Debian's Chromium through
// playwright-core with the flags this project's machines need, opening the
// page with error collection, waiting for the engine, and the native CLI.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

// See shared/docs/toolchain.md ("Headless Chromium"); playwright adds
// --headless and a fresh --user-data-dir itself.
const CHROMIUM_FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export function parseArgs(argv) {
  const args = { url: '', cli: '', module: '', artifacts: 'build/browser-artifacts', site: '' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args) || argv[i + 1] === undefined) throw new Error(`usage: run.mjs --url URL --cli TRAINSIM --module MODULE.mjs [--artifacts DIR] [--site DIR] (bad ${argv[i]})`);
    args[key] = argv[i + 1];
  }
  if (!args.url || !args.cli || !args.module) throw new Error('usage: run.mjs --url URL --cli TRAINSIM --module MODULE.mjs [--artifacts DIR]');
  if (!args.url.endsWith('/')) args.url += '/';
  return args;
}

// One Chromium for the whole run, started on first use (each suite used to
// start its own at the beginning of the run: five or more browsers idling
// side by side on a loaded machine).
let shared = null;
export function launchBrowser() {
  shared ??= newBrowser();
  return shared;
}

// A browser of its own (the benchmarks: one per run, so that a renderer's
// peak memory is that run's).
export function newBrowser() {
  return chromium.launch({
    executablePath: process.env.TRAINSIM_CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_FLAGS,
    // playwright's own handlers close every browser on SIGINT/SIGTERM/SIGHUP
    // and let node go on: each test still to run then fails with "Target
    // page, context or browser has been closed". That is what a run stopped
    // from outside (a timeout, a closed terminal) looked like, and a slow run
    // on a loaded machine is the one that meets its caller's time limit. The
    // handlers below stop the run instead, and say why.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}

export const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
for (const [signal, code] of Object.entries(STOP_SIGNALS)) {
  process.once(signal, () => {
    console.error(`# browser tests stopped by ${signal} from outside (a timeout, Ctrl-C or a closed terminal): `
      + 'the run did not finish, no test failed because of it');
    // At once: no test may go on meanwhile. playwright's exit handler kills
    // the browser's process group.
    process.exit(code);
  });
}

// Opens the page; `problems` collects uncaught page errors, console errors
// and Content-Security-Policy violations.
export async function openPage(browser, url, { width = 1366, height = 900, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  const page = await context.newPage();
  const problems = [];
  // Every URL the page and its workers request, in order.
  const requested = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`);
  });
  await page.goto(url);
  await settled(page);
  return { page, context, problems, requested };
}

// Waits until the engine has answered at least `after` times and is idle.
export async function settled(page, after = 0) {
  await page.waitForFunction((n) => document.body.dataset.status === 'ready' && Number(document.body.dataset.estimates ?? 0) > n, after, { timeout: 15000 });
}

export async function estimates(page) {
  return page.evaluate(() => Number(document.body.dataset.estimates ?? 0));
}

// Runs `action` and waits for the estimate it causes.
export async function act(page, action) {
  const before = await estimates(page);
  await action();
  await settled(page, before);
}

// The memory table as {key: [bytes per stage]}.
export function memoryTable(page) {
  return page.evaluate(() => {
    const out = {};
    for (const row of document.querySelectorAll('#memory-table tbody tr')) {
      out[row.dataset.key] = [...row.querySelectorAll('td')].map((td) => Number(td.dataset.bytes));
    }
    return out;
  });
}

export function runCli(cli, config) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trainsim-browser-'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify(config));
  try {
    return JSON.parse(execFileSync(cli, ['estimate', file], { encoding: 'utf8' }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function close(a, b) {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}
