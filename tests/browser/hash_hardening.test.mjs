// Page hardening (issue 7): 1,000 hostile links - truncated, old or future
// versions, huge, random bytes - go through the page's own URL decoder via
// location.hash. For every one the page shows the banner exactly when the
// decoder ignored something (always, for the version, huge and byte-noise
// links), never renders link text as markup, reports no error, and still
// estimates a good link afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, openPage, settled, estimates } from './harness.mjs';

const GOOD = [
  '#v=1&m=llama3-70b&s=h100-sxm-80gb&n=64&seq=8192&mbs=1&gbs=1024&tp=8&sp=1&pp=4',
  '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64&tp=2&sp=1&pp=2&rc=selective',
  '#v=1&m=mixtral-8x7b&s=a100-sxm-80gb&n=64&seq=4096&mbs=1&gbs=256&tp=2&ep=8&pp=2&z=1',
  '#v=1&m=custom&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8&m.num_layers=4&m.hidden_size=1024&m.name=%C3%A9t%C3%A9%20%E2%9C%93',
];

// Seeded (LCG) so a failure names a reproducible link.
export function hostileHashes(count = 1000, seed = 7_2026) {
  let state = seed >>> 0;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  const out = [];
  for (let i = 0; i < count; i += 1) {
    const kind = ['truncated', 'version', 'huge', 'bytes'][i % 4];
    const good = pick(GOOD);
    let hash;
    if (kind === 'truncated') {
      hash = good.slice(0, 2 + int(good.length - 2));
    } else if (kind === 'version') {
      const v = pick(['0', '2', '10', '-1', '01', '1.0', '', '1e0', 'one', '%31%30', '%00']);
      hash = good.replace('v=1', next() < 0.8 ? `v=${v}` : 'v');
    } else if (kind === 'huge') {
      const size = 8001 + int(120_000);
      hash = pick([
        () => `${good}&${'n=64&'.repeat(Math.ceil(size / 5))}`,
        () => `${good}&m.name=${'x'.repeat(size)}`,
        () => `#${'&'.repeat(10)}${'%41'.repeat(Math.ceil(size / 3))}`,
        () => `${good}&${Array.from({ length: 300 }, (_, k) => `k${k}=${k}`).join('&')}`.padEnd(size, '9'),
      ])();
    } else {
      const n = 1 + int(200);
      const bytes = Array.from({ length: n }, () => {
        const b = int(256);
        return next() < 0.5 ? `%${b.toString(16).padStart(2, '0').toUpperCase()}` : String.fromCharCode(33 + int(94));
      }).join('');
      hash = `#v=1&${bytes}`;
    }
    out.push({ kind, hash });
  }
  return out;
}

export function hashHardeningTests({ url }) {
  let browser;
  before(async () => { browser = await launchBrowser(); });
  after(async () => { await browser?.close(); });

  describe('hostile links', () => {
    it('1,000 truncated, old-version, huge and random-byte links each show the banner and break nothing', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const links = hostileHashes(1000);
      const report = await page.evaluate(async (list) => {
        const { decode } = await import('./state/url.js');
        const { store } = await import('./state/store.js');
        const banner = document.getElementById('banner');
        const rows = [];
        for (const { kind, hash } of list) {
          const changed = new Promise((resolve) => window.addEventListener('hashchange', resolve, { once: true }));
          location.hash = hash;
          const seen = location.hash;  // as the browser stored it (it escapes some characters)
          await Promise.race([changed, new Promise((resolve) => setTimeout(resolve, 200))]);
          await new Promise((resolve) => setTimeout(resolve, 0));
          const flagged = decode(seen, store.get().catalog).ignored.length > 0;
          rows.push({ kind, flagged, shown: !banner.hidden, markup: banner.querySelectorAll('*:not(div):not(p):not(ul):not(li):not(button)').length });
          store.set({ banner: null });  // dismissed, so the next link starts clean
        }
        return rows;
      }, links);
      const bad = [];
      report.forEach((row, i) => {
        if (row.shown !== row.flagged) bad.push(`${i} ${row.kind}: banner ${row.shown ? 'shown' : 'hidden'} but decoder flagged=${row.flagged}: ${links[i].hash.slice(0, 120)}`);
        if (row.kind !== 'truncated' && !row.flagged) bad.push(`${i} ${row.kind}: not flagged: ${links[i].hash.slice(0, 120)}`);
        if (row.markup) bad.push(`${i}: the banner holds markup`);
      });
      assert.deepEqual(bad.slice(0, 10), [], `${bad.length} problems`);
      const counts = {};
      for (const row of report) counts[row.kind] = (counts[row.kind] ?? 0) + (row.shown ? 1 : 0);
      console.log(`# hostile links with a banner: ${JSON.stringify(counts)} of 250 each`);
      // The page still works: a good link estimates and clears the banner.
      const before = await estimates(page);
      await page.evaluate((hash) => { location.hash = hash; }, GOOD[1]);
      await settled(page, before);
      assert.equal(await page.inputValue('#f-training-seq_len'), '4096');
      assert.ok(['fits', 'tight', 'oom'].includes(await page.getAttribute('#verdict', 'data-verdict')));
      assert.equal(await page.isVisible('#banner'), false);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });
  });
}
