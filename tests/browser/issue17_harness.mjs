// Helpers of the issue-17 browser tests: feeding the views a result with
// parts a newer core adds (memory.verdict, suggestions, timeline, time.ops),
// measuring the verdict's contrast, screenshots at laptop and phone sizes in
// both colour schemes, and the Trace Event Format checks.
import path from 'node:path';

// Runs mutate(result, arg) on a copy of the page's result (in the page) and
// shows it as a valid result. `mutate` must be self-contained (it is sent as
// source text).
export async function injectResult(page, mutate, arg = null) {
  const run = new Function(`return (async (arg) => {
    const { store } = await import('./state/store.js');
    const result = structuredClone(store.get().result);
    (${mutate.toString()})(result, arg);
    store.set({ result, errors: [], localErrors: {}, status: 'ready' });
  })`)();
  await page.evaluate(run, arg);
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 60)));  // deferred views
}

// WCAG 2.x contrast ratio of an element's text on its own background.
export function contrastOf(page, selector) {
  return page.$eval(selector, (el) => {
    const parse = (text) => text.match(/[\d.]+/g).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => {
      const c = [r, g, b].map((v) => {
        const x = v / 255;
        return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    };
    const style = getComputedStyle(el);
    let node = el;
    let bg = style.backgroundColor;
    while (node && (bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent')) {
      node = node.parentElement;
      bg = node ? getComputedStyle(node).backgroundColor : 'rgb(255, 255, 255)';
    }
    const [a, b] = [lum(parse(style.color)), lum(parse(bg))].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
}

export const SIZES = [['laptop', 1366, 900], ['phone', 390, 844]];

// name-<size>-<scheme>.png for each size and scheme; back to a laptop, light.
export async function shots(page, artifacts, name, { fullPage = true, sizes = SIZES, schemes = ['light', 'dark'] } = {}) {
  for (const [size, width, height] of sizes) {
    for (const scheme of schemes) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(0, 0);
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 120)));
      await page.screenshot({ path: path.join(artifacts, `${name}-${size}-${scheme}.png`), fullPage });
    }
  }
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
}

// Problems of a Chrome Trace Event Format document (empty: none): the fields
// the format documents for the event types the trace uses.
export function traceProblems(trace) {
  const problems = [];
  if (!Array.isArray(trace?.traceEvents)) return ['no traceEvents array'];
  const flows = new Map();
  trace.traceEvents.forEach((e, i) => {
    const where = `event ${i} ${JSON.stringify(e).slice(0, 120)}`;
    if (!['X', 's', 'f', 'C', 'M'].includes(e.ph)) problems.push(`${where}: ph`);
    if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) problems.push(`${where}: pid/tid`);
    if (typeof e.name !== 'string') problems.push(`${where}: name`);
    if (typeof e.ts !== 'number' || e.ts < 0) problems.push(`${where}: ts`);
    if (e.ph === 'X' && (typeof e.dur !== 'number' || e.dur < 0 || typeof e.cat !== 'string')) problems.push(`${where}: dur/cat`);
    if (e.ph === 'C' && (typeof e.args !== 'object' || Object.values(e.args).some((v) => typeof v !== 'number'))) problems.push(`${where}: counter args`);
    if (e.ph === 'M' && typeof e.args?.name !== 'string' && typeof e.args?.sort_index !== 'number') problems.push(`${where}: metadata args`);
    if (e.ph === 's' || e.ph === 'f') {
      const pair = flows.get(e.id) ?? {};
      pair[e.ph] = (pair[e.ph] ?? 0) + 1;
      flows.set(e.id, pair);
    }
  });
  for (const [id, pair] of flows) if (pair.s !== 1 || pair.f !== 1) problems.push(`flow ${id}: ${JSON.stringify(pair)}`);
  return problems;
}
