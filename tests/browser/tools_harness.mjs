// Helpers for the tests of the page's tools (Search, What-if, Compare,
// Import/Export): the native CLI on a document, waiting for a search,
// downloads, and the screenshots at laptop and phone sizes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Runs `trainsim ARGS... FILE` on a JSON (or text) document; returns the envelope.
export function cli(binary, args, document) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trainsim-tools-'));
  const file = path.join(dir, 'input');
  fs.writeFileSync(file, typeof document === 'string' ? document : JSON.stringify(document));
  try {
    return JSON.parse(execFileSync(binary, [...args, file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }));
  } catch (error) {
    if (error.stdout) return JSON.parse(error.stdout);  // exit 2: an error envelope
    throw error;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Clicks Run on the Search tab and waits until the search ends; returns
// {status, elapsedMs, progress: [done...]}.
export async function runSearch(page, timeout = 120000) {
  await page.evaluate(async () => {
    const { store } = await import('./state/store.js');
    window.trainsimProgress = [];
    window.trainsimUnsubscribe?.();
    window.trainsimUnsubscribe = store.subscribe((state, previous) => {
      if (state.search !== previous.search && state.search.status === 'running' && state.search.total) {
        window.trainsimProgress.push(state.search.done);
      }
    });
  });
  await page.click('#search-run');
  await page.waitForFunction(() => ['done', 'invalid', 'failed', 'cancelled'].includes(document.getElementById('search-status').dataset.status)
    && document.getElementById('search-status').dataset.status !== 'running', null, { timeout });
  return page.evaluate(async () => {
    const { store } = await import('./state/store.js');
    const search = store.get().search;
    return { status: search.status, elapsedMs: search.elapsedMs, progress: [...new Set(window.trainsimProgress)] };
  });
}

export async function download(page, selector) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return { name: file.suggestedFilename(), bytes: fs.readFileSync(await file.path()) };
}

export const SIZES = [['laptop', 1366, 900], ['phone', 390, 844]];
export const SCHEMES = ['light', 'dark'];

// Saves `name-<size>-<scheme>.png` for each size and scheme (the whole
// page, or the window for a dialog: fullPage false), and checks nothing
// scrolls sideways.
export async function screenshots(page, artifacts, name, { fullPage = true } = {}) {
  const overflow = [];
  for (const [size, width, height] of SIZES) {
    for (const scheme of SCHEMES) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(0, 0);
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 120)));  // resize observers, deferred views
      await page.screenshot({ path: path.join(artifacts, `${name}-${size}-${scheme}.png`), fullPage });
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (sideways > 0) overflow.push(`${name} ${size} ${scheme}: ${sideways}px`);
    }
  }
  await page.setViewportSize({ width: 1366, height: 900 });
  return overflow;
}
