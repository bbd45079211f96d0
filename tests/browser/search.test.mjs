// The Search and What-if tabs in headless Chromium: a full search of
// Llama-3-70B on 1024 H100 (timed and printed, not judged), the same answer
// as the native CLI, its best row loaded into the calculator with a link
// that reproduces the numbers, cancel and newest-wins, the what-if chart and
// table against the CLI, and the re-search under a scaled system.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { close, launchBrowser, openPage, settled, estimates } from './harness.mjs';
import { cli, runSearch, screenshots } from './tools_harness.mjs';

const seconds = (page) => page.getAttribute('#iteration-time strong', 'data-seconds').then(Number);
const peak = (page) => page.getAttribute('#fact-peak', 'data-value').then(Number);

export function searchTests({ url, cli: binary, artifacts }) {
  let browser;
  const overflow = [];
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });

  describe('the Search tab', () => {
    it('searches Llama-3-70B on 1024 H100 in pages, as the CLI does, and loads the best plan', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#tab-search');
      assert.match(await page.evaluate(() => location.hash), /&view=search$/);
      assert.match(await page.textContent('#search-target'), /Llama 3 70B.*H100/);
      await page.fill('#search-gpus', '1024');
      // All degrees, micro-batch sizes 1/2/4/8, four recompute modes: the form's defaults.
      assert.equal(await page.inputValue('#search-micro_batch_size'), '1,2,4,8');
      assert.equal(await page.locator('[data-input="recompute"] input:checked').count(), 4);
      const times = [];
      let run;
      for (let i = 0; i < 3; i += 1) {
        run = await runSearch(page);
        assert.equal(run.status, 'done');
        times.push(run.elapsedMs);
      }
      const sorted = [...times].sort((a, b) => a - b);
      const line = `# full search in the page (Llama-3-70B, 1024 H100, all degrees, 4 micro-batch sizes, 4 recompute modes): `
        + `${(sorted[1] / 1000).toFixed(2)} s median of ${times.map((t) => (t / 1000).toFixed(2)).join(', ')} s (target < 3 s)`;
      console.log(line);
      fs.writeFileSync(path.join(artifacts, 'search-time.txt'), `${line}\n`);
      assert.ok(run.progress.length >= 2, `progress reported page by page: ${run.progress}`);

      const { document, result } = await page.evaluate(async () => {
        const { store } = await import('./state/store.js');
        return { document: store.get().search.document, result: store.get().search.envelope.result };
      });
      const native = cli(binary, ['search'], document);
      assert.equal(native.ok, true, JSON.stringify(native.errors));
      // The work counts (skipped, bounded, pruned, evaluated, timed) depend on how the search is
      // paged (the page splits it by layout class); the space searched does not.
      for (const key of ['considered', 'layout_classes']) {
        assert.equal(result.counts[key], native.result.counts[key], `the same ${key} as the CLI`);
      }
      assert.deepEqual(result.top.map((r) => r.index), native.result.top.map((r) => r.index), 'the same ranking');
      assert.deepEqual(result.pareto.map((r) => r.index), native.result.pareto.map((r) => r.index), 'the same Pareto front');
      result.top.forEach((row, i) => assert.ok(close(row.metrics.iteration_s, native.result.top[i].metrics.iteration_s)));

      // The table, the counts and the scatter.
      assert.equal(await page.locator('#search-table tbody tr').count(), result.top.length);
      assert.equal(Number(await page.getAttribute('#search-table tbody tr:first-child', 'data-seconds')), result.top[0].metrics.iteration_s);
      // One unit per column: rows compare at a glance (1.00 k tok/s beside 990 tok/s did not).
      const heads = await page.$$eval('#search-table thead th', (ths) => ths.map((th) => th.textContent));
      for (const name of ['Step', 'Peak', 'Tok/s per GPU']) {
        const cells = await page.$$eval(`#search-table tbody td:nth-child(${heads.indexOf(name) + 1})`, (tds) => tds.map((td) => td.textContent));
        assert.equal(cells.length, result.top.length);
        const units = new Set(cells.map((text) => text.replace(/^[\d.,<\s]+/, '')));
        assert.equal(units.size, 1, `${name}: ${cells.join(' | ')}`);
      }
      for (const key of ['considered', 'pruned', 'infeasible', 'evaluated']) {
        assert.ok(await page.isVisible(`#search-counts [data-count="${key}"]`), `${key} shown`);
      }
      assert.match(await page.textContent('#search-counts [data-count="pruned"]'), /weights, gradients and optimizer states alone exceed/);
      assert.equal(await page.locator('#search-scatter circle.pt-pareto').count(), result.pareto.length);
      await page.locator('#search-scatter svg').scrollIntoViewIfNeeded();
      const scatter = await page.locator('#search-scatter svg').boundingBox();
      const best = await page.locator('#search-scatter circle.pt-top[data-rank="1"]').boundingBox();
      await page.mouse.move(best.x + best.width / 2, best.y + best.height / 2);
      assert.match(await page.textContent('.tooltip'), /#1 .*tp\d/);
      assert.ok(scatter.width > 200);
      overflow.push(...await screenshots(page, artifacts, 'search'));

      // The best row into the calculator: the URL reproduces its numbers.
      const before = await estimates(page);
      await page.click('#search-table tbody tr:first-child');
      await settled(page, before);
      assert.equal(await page.isVisible('#config'), true, 'back on the calculator');
      const hash = await page.evaluate(() => location.hash);
      const t = result.top[0].config.training;
      assert.match(hash, new RegExp(`&n=1024&.*&tp=${t.tp}&.*&pp=${t.pp}(&|$)`));
      assert.doesNotMatch(hash, /view=/);
      assert.ok(close(await seconds(page), result.top[0].metrics.iteration_s), 'the calculator shows the row\'s step time');
      assert.equal(await peak(page), result.top[0].result.memory.peak_bytes);
      const again = await openPage(browser, `${url}${hash}`);
      assert.equal(await again.page.evaluate(() => location.hash), hash, 'the link round-trips');
      assert.equal(await seconds(again.page), await seconds(page));
      assert.equal(await peak(again.page), await peak(page));
      assert.deepEqual(again.problems, []);
      await again.context.close();
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('cancels a search, and a newer search wins over an older one', async () => {
      const { page, context, problems } = await openPage(browser, `${url}#v=1&m=llama3-70b&s=h100-sxm-80gb&n=1024&seq=8192&mbs=1&gbs=1024&view=search`);
      await page.selectOption('#search-sp', 'both');
      await page.check('#search-uneven');
      await page.click('#search-run');
      await page.waitForFunction(() => /Evaluating/.test(document.getElementById('search-status').textContent));
      await page.click('#search-cancel');
      await page.waitForFunction(() => document.getElementById('search-status').dataset.status === 'cancelled', null, { timeout: 60000 });
      assert.equal(await page.isDisabled('#search-cancel'), true);
      // Two runs in a row: the first is cancelled by the second, which finishes.
      await page.selectOption('#search-sp', 'true');
      await page.uncheck('#search-uneven');
      await page.fill('#search-gpus', '512');
      const statuses = await page.evaluate(async () => {
        const { store } = await import('./state/store.js');
        const seen = [];
        const stop = store.subscribe((state, previous) => {
          if (state.search !== previous.search) seen.push(`${state.search.document?.num_gpus}:${state.search.status}`);
        });
        const form = document.getElementById('search-form');
        form.requestSubmit();
        document.getElementById('search-gpus').value = '256';
        document.getElementById('search-gpus').dispatchEvent(new Event('input'));
        form.requestSubmit();
        await new Promise((resolve) => {
          const wait = () => (['done', 'invalid', 'failed'].includes(store.get().search.status) ? resolve() : setTimeout(wait, 50));
          wait();
        });
        stop();
        return { seen, final: store.get().search.document.num_gpus, status: store.get().search.status };
      });
      assert.equal(statuses.status, 'done');
      assert.equal(statuses.final, 256, 'the newest request wins');
      assert.ok(!statuses.seen.includes('512:done'), `the older search never reports a result: ${statuses.seen}`);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('a search link opens the Search tab with its inputs and runs that search; a bad q= is named, never a crash', async () => {
      const base = `${url}#v=1&m=llama3-8b&s=h100-sxm-80gb&n=64&seq=4096&mbs=1&gbs=256`;
      const q = 'n:32-64/32;mbs:1,2;rc:selective,full;k:5';
      const done = (page) => page.waitForFunction(() => ['done', 'invalid', 'failed'].includes(document.getElementById('search-status').dataset.status),
        null, { timeout: 120000 });
      const { page, context, problems } = await openPage(browser, `${base}&q=${q}`);
      await done(page);
      assert.equal(await page.getAttribute('#search-status', 'data-status'), 'done');
      assert.match(await page.evaluate(() => location.hash), new RegExp(`&view=search&q=${q.replace(/[/]/g, '\\/')}$`), 'the link stays as it was');
      assert.equal(await page.inputValue('#search-gpus'), '32-64/32');
      assert.equal(await page.inputValue('#search-micro_batch_size'), '1,2');
      assert.equal(await page.inputValue('#search-top_k'), '5');
      assert.deepEqual(await page.$$eval('[data-input="recompute"] input:checked', (boxes) => boxes.map((b) => b.value)), ['selective', 'full']);
      const first = await page.evaluate(async () => {
        const { store } = await import('./state/store.js');
        const { document, envelope } = store.get().search;
        return { gpus: document.num_gpus, top: envelope.result.top.map((r) => r.index) };
      });
      assert.deepEqual(first.gpus, { min: 32, max: 64, step: 32 });
      assert.ok(first.top.length > 0 && first.top.length <= 5, `${first.top.length} plans`);
      // A GPU range shows the GPUs column, whatever counts the ranked plans have.
      assert.equal(await page.textContent('#search-table thead th:nth-child(2)'), 'GPUs');
      assert.equal(await page.locator('#search-table tbody tr').count(), first.top.length);

      // A search run from the form goes into the link, and that link runs it again.
      await page.fill('#search-gpus', '16-64/16');
      await page.fill('#search-top_k', '3');
      assert.equal((await runSearch(page)).status, 'done');
      const hash = await page.evaluate(() => location.hash);
      assert.match(hash, /&view=search&q=n:16-64\/16;mbs:1,2;rc:selective,full;k:3$/);
      const top = await page.evaluate(async () => (await import('./state/store.js')).store.get().search.envelope.result.top.map((r) => r.index));
      const again = await openPage(browser, `${url}${hash}`);
      await done(again.page);
      assert.equal(await again.page.inputValue('#search-gpus'), '16-64/16');
      assert.deepEqual(await again.page.evaluate(async () => (await import('./state/store.js')).store.get().search.envelope.result.top.map((r) => r.index)), top,
        'the same plans');
      // Back to the first link: its search runs again.
      await again.page.evaluate((h) => { location.hash = h; }, `${base.slice(base.indexOf('#'))}&q=${q}`);
      await again.page.waitForFunction(() => document.getElementById('search-gpus').value === '32-64/32');
      await done(again.page);
      assert.deepEqual(await again.page.evaluate(async () => (await import('./state/store.js')).store.get().search.envelope.result.top.map((r) => r.index)), first.top);
      assert.deepEqual(again.problems, []);
      await again.context.close();

      // Hostile values: each is named in the banner, the rest of the link is used, nothing breaks.
      const hostile = await openPage(browser, `${base}&q=n:%253Cimg%2520src%253Dx%2520onerror%253Dalert(1)%253E;k:1000;zz:1;u:yes;h:%25ZZ;mbs:2;${'9'.repeat(300)}`);
      await done(hostile.page);
      const items = await hostile.page.$$eval('#banner li', (lis) => lis.map((li) => li.textContent));
      for (const expected of ['q: n=<img src=x onerror=alert(1)> (expected a count', 'q: k=1000 (expected from 1 to 100)', 'q: zz=1 (unknown search input)',
        'q: u=yes (expected 1 or 0)', 'q: h=%ZZ (malformed escape)', '(no value)']) {
        assert.ok(items.some((item) => item.includes(expected)), `banner lists ${expected}: ${JSON.stringify(items)}`);
      }
      assert.equal(await hostile.page.locator('#banner img').count(), 0, 'banner text is never markup');
      assert.equal(await hostile.page.inputValue('#search-micro_batch_size'), '2', 'what could be read is used');
      assert.equal(await hostile.page.getAttribute('#search-status', 'data-status'), 'done');
      assert.deepEqual(hostile.problems, []);
      await hostile.context.close();
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('shows progress from the first moment, the time left and the best plan so far, and cancels at once', async () => {
      const { page, context, problems } = await openPage(browser, `${url}#v=1&m=llama3-70b&s=h100-sxm-80gb&n=1024&seq=8192&mbs=1&gbs=1024&view=search`);
      await page.selectOption('#search-sp', 'both');
      await page.check('#search-uneven');
      // In the same task as the click: running, the status says what happens, the bar is indeterminate.
      const start = await page.evaluate(() => {
        document.getElementById('search-form').requestSubmit();
        const status = document.getElementById('search-status');
        return { status: status.dataset.status, text: status.textContent, determinate: document.getElementById('search-progress').hasAttribute('value'),
          clock: !document.getElementById('search-clock').hidden, cancel: !document.getElementById('search-cancel').disabled };
      });
      assert.deepEqual(start, { status: 'running', text: 'Counting the layout classes and searching the first ones…', determinate: false, clock: true, cancel: true });
      await page.waitForFunction(() => /Evaluating layout classes: [\d,]+ of [\d,]+ \(\d+%\)/.test(document.getElementById('search-status').textContent),
        null, { timeout: 60000 });
      await page.waitForFunction(() => !document.getElementById('search-best').hidden, null, { timeout: 60000 });
      assert.match(await page.textContent('#search-best'), /^Best so far: tp\d+ pp\d+.* per step, .* per GPU$/);
      assert.ok(Number(await page.getAttribute('#search-best', 'data-seconds')) > 0);
      await page.waitForFunction(() => document.getElementById('search-clock').dataset.etaMs !== '', null, { timeout: 60000 });
      assert.match(await page.textContent('#search-clock'), /^[\d.]+ (s|min) elapsed, about [\d.]+ (s|min) left$/);
      assert.ok(await page.evaluate(() => document.getElementById('search-progress').value > 0));
      const cancelMs = await page.evaluate(async () => {
        const status = document.getElementById('search-status');
        if (status.dataset.status !== 'running') return -1;
        const t0 = performance.now();
        document.getElementById('search-cancel').click();
        await new Promise((resolve) => {
          const wait = () => (status.dataset.status === 'cancelled' ? resolve() : setTimeout(wait, 5));
          wait();
        });
        return performance.now() - t0;
      });
      console.log(`# cancel to "Cancelled." in the page: ${cancelMs.toFixed(0)} ms (reported, not judged beyond 5 s)`);
      assert.ok(cancelMs >= 0 && cancelMs < 5000, `cancelled in ${cancelMs} ms`);
      assert.equal(await page.isVisible('#search-best'), false);
      assert.equal(await page.isVisible('#search-clock'), false);
      // The workers are free again: a small search runs to the end.
      await page.selectOption('#search-sp', 'true');
      await page.uncheck('#search-uneven');
      await page.fill('#search-gpus', '64');
      assert.equal((await runSearch(page)).status, 'done');
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('names the search inputs it cannot read, and the core\'s errors by path', async () => {
      const { page, context, problems } = await openPage(browser, `${url}#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8&view=search`);
      await page.fill('#search-tp', 'two');
      await page.click('#search-run');
      assert.match(await page.textContent('[data-input="tp"] .field-error'), /a value or a list/);
      await page.fill('#search-tp', '99999999');
      const run = await runSearch(page);
      assert.equal(run.status, 'invalid');
      assert.match(await page.textContent('#search-errors'), /\/constraints\/tp: must be at most/);
      // No plan fits: the reasons say why.
      await page.fill('#search-tp', '');
      await page.fill('#search-gpus', '1');
      assert.equal((await runSearch(page)).status, 'done');
      assert.match(await page.textContent('#search-summary'), /No plan fits/);
      assert.match(await page.textContent('#search-counts [data-count="pruned"]'), /alone exceed the memory budget/);
      // No combination at all.
      await page.fill('#search-gpus', '8');
      await page.fill('#search-tp', '3');
      assert.equal((await runSearch(page)).status, 'done');
      assert.match(await page.textContent('#search-summary'), /No combination/);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });
  });

  describe('the What-if tab', () => {
    it('shows the step time change per system figure, as the CLI does, and re-searches under a scaled system', async () => {
      const hash = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64&tp=2&sp=1&pp=2';
      const { page, context, problems } = await openPage(browser, `${url}${hash}`);
      await page.click('#tab-whatif');
      await page.waitForSelector('#whatif-table');
      const config = await page.evaluate(async () => {
        const { store } = await import('./state/store.js');
        const { toConfig } = await import('./state/config.js');
        return toConfig(store.get().spec);
      });
      const native = cli(binary, ['whatif'], config);
      assert.equal(native.ok, true, JSON.stringify(native.errors));
      const figures = native.result.figures;
      assert.equal(await page.locator('#whatif-table tbody tr').count(), figures.length);
      assert.equal(await page.locator('#whatif-chart g.tornado-row').count(), figures.length);
      assert.equal(await page.getAttribute('#whatif-most', 'data-figure'), native.result.most_sensitive);
      assert.equal(await page.getAttribute('#whatif-table tr.most', 'data-figure'), native.result.most_sensitive);
      for (const figure of figures) {
        const shown = await page.$$eval(`#whatif-table tr[data-figure="${figure.figure}"] td[data-seconds]`, (tds) => tds.map((td) => Number(td.dataset.seconds)));
        figure.points.forEach((p, i) => assert.ok(close(shown[i], p.iteration_s), `${figure.figure} x${p.factor}`));
      }
      // The chart follows the plan.
      await page.click('#tab-calc');
      const before = await estimates(page);
      await page.fill('#f-training-tp', '4');
      await settled(page, before);
      await page.click('#tab-whatif');
      await page.waitForFunction((old) => document.querySelector('#whatif-table td[data-seconds]')?.dataset.seconds !== old,
        String(figures[0].points[0].iteration_s));
      overflow.push(...await screenshots(page, artifacts, 'whatif'));
      // Re-search with the most sensitive figure scaled: the Search tab opens, prefilled.
      const most = await page.getAttribute('#whatif-most', 'data-figure');
      await page.click('#whatif-research');
      assert.match(await page.evaluate(() => location.hash), /view=search/);
      await page.waitForSelector('#search-scaled:not([hidden])');
      await page.waitForFunction(() => ['done', 'invalid'].includes(document.getElementById('search-status').dataset.status), null, { timeout: 120000 });
      const document = await page.evaluate(async () => (await import('./state/store.js')).store.get().search.document);
      if (most === 'peak_flops') assert.ok(close(document.system.gpu.peak_tflops.bf16, 2 * 989.4), JSON.stringify(document.system));
      assert.notDeepEqual(document.system, { preset: 'h100-sxm-80gb' }, 'the search runs on the changed system');
      await page.click('#search-scaled-clear');
      assert.equal(await page.isVisible('#search-scaled'), false);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('has no sideways scrolling on the Search and What-if tabs', () => {
      assert.deepEqual(overflow, []);
    });
  });
}
