// Issue 17 in headless Chromium, part 3: polish (one unit per view, zero
// parts greyed, Compare deltas and named pins, the What-if tornado, the
// timeline's fit, zoom, phases and unknown event kinds), phones (results one
// tap away) and accessibility (landmarks, skip link, focusable scroller,
// focus rings on bars, hatched segments).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { act, launchBrowser, openPage, settled } from './harness.mjs';
import { injectResult, shots } from './issue17_harness.mjs';

export function polishTests({ url, artifacts }) {
  let browser;
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });
  const noProblems = (problems) => assert.deepEqual(problems, [], 'the page reported errors');

  describe('polish', () => {
    it('writes one unit per view, the step in seconds, no "0.000", and greys zero parts', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#memory-numbers summary');
      const unit = await page.getAttribute('#memory-table', 'data-unit');
      const cells = await page.$$eval('#memory-table tbody td', (tds) => tds.map((td) => td.textContent));
      assert.ok(cells.every((text) => text.endsWith(` ${unit}`)), `all in ${unit}: ${cells.join(' | ')}`);
      assert.match(await page.textContent('#fact-step .value'), /^[\d.]+ s$/);
      const parts = await page.$$eval('#time-parts .value', (els) => els.map((el) => el.textContent.split(' ').pop()));
      assert.equal(new Set(parts).size, 1, `one unit in the step breakdown: ${parts}`);
      const text = await page.evaluate(() => document.getElementById('view-calc').innerText);
      assert.doesNotMatch(text, /\b0\.000\b/);
      const zeros = (await page.getAttribute('#time-zero-parts', 'data-keys')).split(' ').filter(Boolean);
      assert.ok(zeros.includes('cp_comm_exposed_s') && zeros.includes('ep_comm_exposed_s'), zeros.join());
      for (const key of zeros) assert.equal(await page.locator(`#time-parts li[data-key="${key}"]`).count(), 0, `${key} not listed as a part`);
      const greyed = await page.$$eval('#memory-table tbody tr.zero', (trs) => trs.map((tr) => tr.dataset.key));
      const legendZero = await page.$$eval('#memory-legend li.zero', (lis) => lis.map((li) => li.dataset.key));
      assert.deepEqual(greyed, legendZero);
      noProblems(problems);
      await context.close();
    });

    it('compares pins with "delta vs #1" and names that travel in the link', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#pin-config');
      await act(page, () => page.fill('#f-training-tp', '4'));
      await page.click('#pin-config');
      await page.click('#tab-compare');
      await page.waitForSelector('#compare-table td:has-text("fits"), #compare-table td:has-text("out of memory")');
      await page.waitForFunction(() => !document.querySelector('#compare-table').textContent.includes('computing'));
      const delta = await page.textContent('#compare-table tr[data-row="step"] td:nth-child(3) .delta');
      assert.match(delta, /^ \([+−][\d.]+ % vs #1\)$/);
      assert.equal(await page.locator('#compare-table tr[data-row="step"] td:nth-child(2) .delta').count(), 0, '#1 has no delta');
      await page.fill('#pin-name-0', 'baseline tp8');
      await page.press('#pin-name-0', 'Enter');
      await page.waitForFunction(() => location.hash.includes('c1=name:baseline%2520tp8;'));
      const hash = await page.evaluate(() => location.hash);
      const again = await openPage(browser, `${url}${hash}`);
      await again.page.click('#tab-compare');
      assert.equal(await again.page.inputValue('#pin-name-0'), 'baseline tp8');
      await shots(again.page, artifacts, 'compare-named', { sizes: [['laptop', 1366, 900]] });
      await again.context.close();
      noProblems(problems);
      await context.close();
    });

    it('draws What-if as a tornado, most sensitive figure on top', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#tab-whatif');
      await page.waitForSelector('#whatif-chart g.tornado-row', { timeout: 60000 });
      const rows = await page.$$eval('#whatif-chart g.tornado-row', (gs) => gs.map((g) => {
        const xs = [...g.querySelectorAll('rect')].flatMap((r) => [Number(r.getAttribute('x')), Number(r.getAttribute('x')) + Number(r.getAttribute('width'))]);
        return { figure: g.dataset.figure, span: xs.length ? Math.max(...xs) - Math.min(...xs) : 0 };
      }));
      const figures = await page.locator('#whatif-table tbody tr').count();
      assert.equal(rows.length, figures);
      for (let i = 1; i < rows.length; i += 1) assert.ok(rows[i - 1].span >= rows[i].span - 1.01, `sorted by range: ${JSON.stringify(rows)}`);
      assert.equal(rows[0].figure, await page.getAttribute('#whatif-most', 'data-figure'));
      // No value label overlaps its row's figure name or leaves the chart.
      const overlaps = await page.$$eval('#whatif-chart g.tornado-row', (gs) => gs.flatMap((g) => {
        const [name, ...values] = [...g.querySelectorAll('text')].map((t) => t.getBoundingClientRect());
        const chart = g.ownerSVGElement.getBoundingClientRect();
        return values.filter((v) => v.left < name.right || v.right > chart.right + 1).map((v) => `${g.dataset.figure}: ${v.left}-${v.right} vs name ${name.right}`);
      }));
      assert.deepEqual(overlaps, []);
      await shots(page, artifacts, 'whatif-tornado');
      // On a phone every label stays inside the chart and the axis labels do not run together.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForFunction(() => document.querySelector('#whatif-chart svg')?.getAttribute('width') < 400, null, { timeout: 10000 });
      const phone = await page.$eval('#whatif-chart svg', (svg) => {
        const box = svg.getBoundingClientRect();
        const texts = [...svg.querySelectorAll('text')].map((t) => ({ text: t.textContent, r: t.getBoundingClientRect(), axis: !t.closest('g.tornado-row') && t.classList.contains('tick') }));
        const outside = texts.filter(({ r }) => r.left < box.left - 1 || r.right > box.right + 1).map((t) => t.text);
        const axis = texts.filter((t) => t.axis).sort((a, b) => a.r.left - b.r.left);
        const crowded = axis.slice(1).filter((t, i) => t.r.left < axis[i].r.right + 2).map((t) => t.text);
        return { outside, crowded };
      });
      assert.deepEqual(phone, { outside: [], crowded: [] });
      await page.setViewportSize({ width: 1366, height: 900 });
      noProblems(problems);
      await context.close();
    });

    it('fits the timeline to the width, zooms, shades warm-up and cool-down, and draws unknown kinds by name', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.waitForSelector('#timeline-chart svg');
      const fit = await page.evaluate(() => {
        const chart = document.getElementById('timeline-chart');
        return { svg: Number(chart.querySelector('svg').getAttribute('width')), box: chart.clientWidth, scroll: chart.scrollWidth };
      });
      assert.ok(fit.svg <= fit.box && fit.scroll <= fit.box + 1, `fits: ${JSON.stringify(fit)}`);
      assert.ok(await page.locator('#timeline-chart rect.phase-warmup').count() >= 4);
      assert.ok(await page.locator('#timeline-chart rect.phase-cooldown').count() >= 4);
      await page.click('#timeline-zoom-in');
      await page.click('#timeline-zoom-in');
      await page.waitForFunction((w) => Number(document.querySelector('#timeline-chart svg').getAttribute('width')) > 3 * w, fit.svg);
      assert.equal(await page.textContent('#timeline-zoom'), '×4');
      await page.focus('#timeline-chart');
      await page.keyboard.press('End');
      assert.ok(await page.evaluate(() => document.getElementById('timeline-chart').scrollLeft) > 0, 'the focused scroller scrolls by keyboard');
      await page.click('#timeline-fit');
      await injectResult(page, (result) => {
        const stage = result.timeline.stages[0];
        const cols = result.timeline.columns;
        const row = (kind, t0, t1) => (cols ? [kind, 0, 0, t0, t1] : { kind, micro_batch: 0, chunk: 0, start_s: t0, end_s: t1 });
        stage.events.push(row('weight', 0.01, 0.02), row('forward_backward', 0.03, 0.04), row('mystery_stream', 0.05, 0.06));
      });
      await page.waitForSelector('#timeline-legend li[data-kind="mystery_stream"]');
      assert.equal(await page.textContent('#timeline-legend li[data-kind="mystery_stream"]'), 'mystery stream');
      assert.equal(await page.textContent('#timeline-legend li[data-kind="weight"]'), 'weight gradient (W)');
      assert.equal(await page.locator('#timeline-chart path[data-kind="mystery_stream"]').count(), 1);
      await shots(page, artifacts, 'timeline-fit', { sizes: [['laptop', 1366, 900]] });
      noProblems(problems);
      await context.close();
    });
  });

  describe('phones and accessibility', () => {
    it('puts the results one tap away on a phone (Results / Form)', async () => {
      const { page, context, problems } = await openPage(browser, url, { width: 390, height: 844 });
      assert.equal(await page.isVisible('#pane-switch'), true);
      const top = await page.evaluate(() => document.getElementById('memory').getBoundingClientRect().top);
      assert.ok(top < 844 * 1.5, `memory chart near the top (${top}px)`);
      assert.equal(await page.isVisible('#config'), false, 'the form waits behind its tab');
      await page.click('#pane-form');
      assert.equal(await page.isVisible('#config'), true);
      assert.equal(await page.isVisible('#results'), false);
      assert.equal(await page.isVisible('#verdict'), true, 'the verdict stays in view');
      await shots(page, artifacts, 'phone-form', { sizes: [['phone', 390, 844]] });
      await page.setViewportSize({ width: 390, height: 844 });  // shots() ends on a laptop
      await page.click('#pane-results');
      await shots(page, artifacts, 'phone-results', { sizes: [['phone', 390, 844]] });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `no sideways scrolling (${overflow}px)`);
      noProblems(problems);
      await context.close();
    });

    it('keeps the nav landmarks, a skip link, focus rings on bars and hatched segments', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const navs = await page.$$eval('nav', (els) => els.map((el) => ({ id: el.id, role: el.getAttribute('role') })));
      assert.deepEqual(navs, [{ id: 'toolbar', role: null }, { id: 'tabs', role: null }]);
      assert.equal(await page.locator('#tabs [role="tablist"] [role="tab"]').count(), 4);
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement.className), 'skip-link');
      assert.equal(await page.isVisible('.skip-link'), true);
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate(() => document.activeElement.id), 'results');
      assert.doesNotMatch(await page.evaluate(() => location.hash), /results/, 'the link keeps its state');
      assert.equal(await page.getAttribute('#timeline-chart', 'tabindex'), '0');
      await page.focus('#memory-chart g.bar');
      const ring = await page.$eval('#memory-chart g.bar:focus .focus-ring', (el) => getComputedStyle(el).stroke);
      assert.notEqual(ring, 'none');
      assert.doesNotMatch(ring, /rgba\(0, 0, 0, 0\)|transparent/);
      assert.ok(await page.locator('#memory-chart rect.hatch').count() >= 4, 'segments carry hatching');
      assert.ok(await page.locator('#memory-chart text.seg-label').count() >= 1, 'and labels where they fit');
      await shots(page, artifacts, 'a11y-focus-ring', { fullPage: false, sizes: [['laptop', 1366, 900]] });
      noProblems(problems);
      await context.close();
    });
  });
}
