// End-to-end tests of the trainsim page in headless Chromium. Started by
// run.mjs, which passes the site URL, the native CLI and the artifacts dir.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { act, close, estimates, launchBrowser, memoryTable, openPage, runCli, settled } from './harness.mjs';
import { randomHashes } from './random_hashes.mjs';
import { bytesUnit, formatBytesIn } from '../../web/lib/format.js';

export function pageTests({ url, cli, artifacts }) {
  let browser;
  const shot = async (page, name) => {
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));  // deferred views (timeline)
    await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  };
  const noProblems = (problems) => assert.deepEqual(problems, [], 'the page reported errors');

  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });

  describe('the page', () => {
    it('loads and shows a result for the default view', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const verdict = await page.getAttribute('#verdict', 'data-verdict');
      assert.ok(['fits', 'tight', 'oom'].includes(verdict), `verdict ${verdict}`);
      const hash = await page.evaluate(() => location.hash);
      assert.match(hash, /^#v=1&m=[\w.-]+&s=[\w.-]+&n=64&seq=8192&mbs=1&gbs=1024&tp=8&sp=1&pp=4$/);
      assert.ok(await page.locator('#memory-chart rect.seg').count() >= 4, 'stacked bars drawn');
      assert.equal(await page.locator('#memory-table tbody tr').first().locator('td').count(), 4, 'pp=4 stages');
      noProblems(problems);
      await context.close();
    });

    it('measures the time to the first result (reported, not judged)', async () => {
      const times = [];
      for (let i = 0; i < 3; i += 1) {
        const { page, context } = await openPage(browser, url);
        times.push(await page.evaluate(() => performance.getEntriesByName('trainsim:first-result')[0]?.startTime ?? NaN));
        await context.close();
      }
      const sorted = [...times].sort((a, b) => a - b);
      console.log(`# time to first result after load: ${sorted[1].toFixed(0)} ms median (${times.map((t) => t.toFixed(0)).join(', ')} ms)`);
      fs.writeFileSync(path.join(artifacts, 'time-to-first-result.txt'), `${times.map((t) => t.toFixed(1)).join('\n')}\n`);
      assert.ok(times.every(Number.isFinite));
    });

    it('changing tp changes the memory chart (offline), and back undoes it', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const chart = () => page.evaluate(() => [...document.querySelectorAll('#memory-chart rect.seg')]
        .map((r) => `${r.getAttribute('y')}/${r.getAttribute('height')}`).join(' '));
      const bars = await chart();
      const table = await memoryTable(page);
      await context.setOffline(true);  // once loaded, the page needs no network
      await act(page, () => page.fill('#f-training-tp', '4'));
      assert.match(await page.evaluate(() => location.hash), /&tp=4&/);
      assert.notEqual(await chart(), bars, 'the bars moved');
      const changed = await memoryTable(page);
      assert.ok(changed.parameters_bytes[0] > table.parameters_bytes[0], 'tp 8 -> 4 doubles the parameter shard');
      await act(page, () => page.goBack());
      assert.match(await page.evaluate(() => location.hash), /&tp=8&/);
      assert.equal(await page.inputValue('#f-training-tp'), '8');
      assert.deepEqual(await memoryTable(page), table);
      assert.equal(await chart(), bars);
      await act(page, () => page.goForward());
      assert.equal(await page.inputValue('#f-training-tp'), '4');
      noProblems(problems);
      await context.close();
    });

    it('a shared link shows the same numbers as the native CLI', async () => {
      const config = {
        model: { preset: 'llama3-8b', num_layers: 24 },
        training: { seq_len: 4096, micro_batch_size: 1, global_batch_size: 64, tp: 2, pp: 2, sequence_parallel: true,
          recompute: { granularity: 'selective' } },
        system: { preset: 'h100-sxm-80gb', num_gpus: 16, gpu: { hbm_capacity_gib: 96 } },
      };
      const hash = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64&tp=2&sp=1&pp=2&rc=selective'
        + '&m.num_layers=24&s.gpu.hbm_capacity_gib=96';
      const cliEnvelope = runCli(cli, config);
      assert.equal(cliEnvelope.ok, true, JSON.stringify(cliEnvelope.errors));
      const expected = cliEnvelope.result;
      const { page, context, problems } = await openPage(browser, `${url}${hash}`);
      assert.equal(await page.evaluate(() => location.hash), hash, 'the link is kept as it was');
      const table = await memoryTable(page);
      for (const [key, values] of Object.entries(table)) {
        expected.memory.stages.forEach((stage, i) => {
          assert.ok(close(values[i], stage[key]), `stage ${i} ${key}: page ${values[i]}, CLI ${stage[key]}`);
        });
      }
      // One unit for the whole table (the largest value's).
      const texts = await page.$$eval('#memory-table tbody tr[data-key="peak_bytes"] td', (tds) => tds.map((td) => td.textContent));
      const unit = bytesUnit(Math.max(...expected.memory.stages.map((s) => Math.max(s.reserved_bytes, s.peak_bytes))));
      assert.equal(await page.getAttribute('#memory-table', 'data-unit'), unit.name);
      assert.deepEqual(texts, expected.memory.stages.map((s) => formatBytesIn(s.peak_bytes, unit)));
      assert.equal(await page.textContent('#fact-peak .value'),
        formatBytesIn(expected.memory.peak_bytes, bytesUnit(Math.max(expected.memory.peak_bytes, expected.memory.reserved_bytes))));
      const status = expected.memory.verdict?.status ?? (expected.fits ? 'fits' : 'out_of_memory');
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), { fits: 'fits', tight: 'tight', out_of_memory: 'oom' }[status]);
      if (expected.time) {
        const seconds = Number(await page.getAttribute('#iteration-time strong', 'data-seconds'));
        assert.ok(close(seconds, expected.time.iteration_s), `iteration ${seconds} vs ${expected.time.iteration_s}`);
        const zero = (await page.getAttribute('#time-zero-parts', 'data-keys')).split(' ');
        for (const [key, value] of Object.entries(expected.time.breakdown ?? {})) {
          if (value === 0) {
            assert.ok(zero.includes(key), `${key} is listed with the zero parts`);
            continue;
          }
          const shown = Number(await page.getAttribute(`#time-parts li[data-key="${key}"]`, 'data-seconds'));
          assert.ok(close(shown, value), `${key}: page ${shown}, CLI ${value}`);
        }
      }
      if (expected.throughput) {
        const tokens = Number(await page.getAttribute('#card-tokens .card-value', 'data-value'));
        assert.ok(close(tokens, expected.throughput.tokens_per_s), 'tokens/s');
      }
      // The page sends the core the same document (modulo key order).
      await page.click('#open-export');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-config-json')]);
      const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
      assert.deepEqual(runCli(cli, exported).result.memory, expected.memory);
      await page.click('#export-close');
      noProblems(problems);
      await context.close();
    });

    it('a malformed link shows a banner listing what was ignored', async () => {
      const hash = '#v=1&m=no-such-model&tp=abc&zz=1&seq=4096&%E0%A4%A=1&<img src=x onerror=alert(1)>=2&pp';
      const { page, context, problems } = await openPage(browser, `${url}${hash}`);
      assert.equal(await page.isVisible('#banner'), true);
      const items = await page.$$eval('#banner li', (lis) => lis.map((li) => li.textContent));
      for (const expected of ['m=no-such-model', 'tp=abc', 'zz=1', '%E0%A4%A=1', '<img src=x onerror=alert(1)>=2', 'pp (no value)']) {
        assert.ok(items.some((item) => item.includes(expected)), `banner lists ${expected}: ${JSON.stringify(items)}`);
      }
      assert.equal(await page.locator('#banner img').count(), 0, 'banner text is never markup');
      assert.equal(await page.inputValue('#f-training-seq_len'), '4096', 'the readable fields are kept');
      assert.ok(['fits', 'tight', 'oom'].includes(await page.getAttribute('#verdict', 'data-verdict')));
      assert.doesNotMatch(await page.evaluate(() => location.hash), /zz|abc/, 'the address shows what was read');
      await shot(page, 'banner-laptop-light');
      await page.click('.banner-close');
      assert.equal(await page.isVisible('#banner'), false);
      noProblems(problems);
      await context.close();
    });

    it('an invalid field shows its error next to the field', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await act(page, () => page.fill('#f-training-tp', '16'));
      const error = page.locator('[data-path="/training/tp"] .field-error');
      assert.equal(await error.isVisible(), true);
      assert.match(await error.textContent(), /must divide num_kv_heads \(8\), got 16/);
      assert.equal(await page.getAttribute('#f-training-tp', 'aria-invalid'), 'true');
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'invalid');
      await shot(page, 'invalid-field-laptop-light');
      // Text that is not a number is caught before the engine.
      await page.fill('#f-training-seq_len', '12x');
      await page.waitForSelector('[data-path="/training/seq_len"] .field-error:not([hidden])');
      assert.match(await page.textContent('[data-path="/training/seq_len"] .field-error'), /expected a number/);
      await page.fill('#f-training-seq_len', '8192');
      await act(page, () => page.fill('#f-training-tp', '8'));
      assert.equal(await error.isVisible(), false);
      assert.equal(await page.isVisible('[data-path="/training/seq_len"] .field-error'), false);
      assert.ok(['fits', 'tight', 'oom'].includes(await page.getAttribute('#verdict', 'data-verdict')));
      // A model field error lands next to the model field.
      await act(page, () => page.fill('#f-model-num_kv_heads', '7'));
      assert.match(await page.textContent('[data-path="/model/num_kv_heads"] .field-error'), /must divide num_attention_heads/);
      noProblems(problems);
      await context.close();
    });

    it('1,000 random links leave the page working', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const hashes = randomHashes(1000);
      const decoded = await page.evaluate(async (list) => {
        const { decode, encode } = await import('./state/url.js');
        const { store } = await import('./state/store.js');
        const catalog = store.get().catalog;
        let ok = 0;
        for (const hash of list) {
          const { state, ignored } = decode(hash, catalog);
          if (state && Array.isArray(ignored) && typeof encode(state, catalog) === 'string') ok += 1;
        }
        return ok;
      }, hashes);
      assert.equal(decoded, hashes.length, 'decode always returns a state');
      await page.evaluate(async (list) => {
        for (const hash of list) {
          location.hash = hash;
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      }, hashes);
      const before = await estimates(page);
      await page.evaluate(() => { location.hash = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8'; });
      await settled(page, before);
      assert.equal(await page.inputValue('#f-training-seq_len'), '2048');
      assert.ok(['fits', 'tight', 'oom'].includes(await page.getAttribute('#verdict', 'data-verdict')));
      assert.equal(await page.isVisible('#banner'), false);
      noProblems(problems);
      await context.close();
    });

    it('exports and imports the config as JSON (one Export and one Import button)', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#open-export');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-config-json')]);
      const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
      await page.click('#export-close');
      assert.equal(exported.training.tp, 8);
      assert.equal(exported.system.num_gpus, 64);
      exported.training.tp = 2;
      exported.training.pp = 1;
      exported.unknown_key = true;
      exported.model.not_a_field = 1;
      await page.click('#open-import');
      await page.click('#import-kind-json');
      await act(page, () => page.setInputFiles('#import-json-text-file', { name: 'mine.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(exported)) }));
      assert.equal(await page.inputValue('#f-training-tp'), '2');
      assert.match(await page.evaluate(() => location.hash), /&tp=2(&|$)/);
      await page.click('#import-close');
      const items = await page.$$eval('#banner li', (lis) => lis.map((li) => li.textContent));
      assert.ok(items.includes('ignored: /unknown_key') && items.includes('ignored: /model/not_a_field'), JSON.stringify(items));
      await page.click('#open-import');
      await page.click('#import-kind-json');
      await page.setInputFiles('#import-json-text-file', { name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{not json') });
      await page.waitForSelector('#import-outcome .outcome-title:text("It is not JSON.")');
      noProblems(problems);
      await context.close();
    });

    it('copies the link', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#copy-link');
      await page.waitForSelector('.toolbar-status:text("Link copied")');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await page.evaluate(() => location.href));
      noProblems(problems);
      await context.close();
    });

    it('shows time, throughput and timeline when the core reports them', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const reported = await page.evaluate(async () => {
        const { store } = await import('./state/store.js');
        return Boolean(store.get().result.time);
      });
      if (!reported) {
        // Until the time model lands, feed the views a result of its shape.
        await page.evaluate(async () => {
          const { store } = await import('./state/store.js');
          const result = structuredClone(store.get().result);
          const b = { forward_s: 0.9, backward_s: 1.8, recompute_s: 0.3, optimizer_s: 0.05, tp_comm_exposed_s: 0.2,
            cp_comm_exposed_s: 0, ep_comm_exposed_s: 0, pp_comm_exposed_s: 0.04, dp_comm_exposed_s: 0.1, bubble_s: 0.35 };
          result.time = { iteration_s: 3.74, breakdown: b };
          result.throughput = { tokens_per_s: 2.24e6, tokens_per_s_per_gpu: 35000, model_tflops_per_gpu: 420,
            hardware_tflops_per_gpu: 455, mfu: 0.425, flop_convention: '6ND + attention', seconds_per_trillion_tokens: 446000,
            gpu_hours_per_trillion_tokens: 7930 };
          const stages = [0, 1, 2, 3].map((stage) => {
            const events = [];
            for (let mb = 0; mb < 8; mb += 1) {
              const f = (stage + mb) * 0.1;
              events.push({ kind: 'forward', micro_batch: mb, chunk: 0, start_s: f, end_s: f + 0.09 });
              events.push({ kind: 'comm', micro_batch: mb, chunk: 0, start_s: f + 0.09, end_s: f + 0.1 });
              const bk = 1.2 + (3 - stage + mb) * 0.2;
              events.push({ kind: 'backward', micro_batch: mb, chunk: 0, start_s: bk, end_s: bk + 0.18 });
              // An overlapped pipeline transfer beside the backward (interleaved p2p overlap).
              events.push({ kind: 'send', micro_batch: mb, chunk: 0, start_s: bk + 0.05, end_s: bk + 0.1 });
            }
            return { stage, events };
          });
          result.timeline = { stages };
          store.set({ result });
        });
      }
      await page.waitForSelector('#timeline-chart path.ev');  // drawn just after the other views
      for (const id of ['#time', '#throughput', '#timeline']) assert.equal(await page.isVisible(id), true, `${id} visible`);
      assert.ok(await page.locator('#timeline-chart path.ev').count() > 0);
      // Transfers are a thin band at the row's foot, so the pass they overlap stays visible.
      assert.match(await page.getAttribute('#timeline-chart path.ev[data-kind="send"]', 'd'), /v4h/);
      assert.match(await page.getAttribute('#timeline-chart path.ev[data-kind="backward"]', 'd'), /v16h/);
      assert.ok(await page.locator('#throughput-cards .card').count() >= 7);
      await page.hover('#memory-chart g.bar');
      assert.equal(await page.isVisible('.tooltip'), true, 'hover shows values');
      assert.match(await page.textContent('.tooltip'), /Parameters: .* GiB/);
      // Sweep the first row until the pointer is over an event.
      await page.locator('#timeline-chart svg').scrollIntoViewIfNeeded();
      const box = await page.locator('#timeline-chart svg').boundingBox();
      let tip = '';
      for (let x = box.x + 60; x < box.x + box.width && !/micro-batch/.test(tip); x += 3) {
        await page.mouse.move(x, box.y + 8 + 11);
        tip = (await page.isVisible('.tooltip')) ? await page.textContent('.tooltip') : '';
      }
      assert.match(tip, /Stage 0: .*micro-batch \d+/);
      for (const [name, width, height] of [['laptop', 1366, 900], ['phone', 390, 844]]) {
        for (const scheme of ['light', 'dark']) {
          await page.setViewportSize({ width, height });
          await page.emulateMedia({ colorScheme: scheme });
          await page.mouse.move(0, 0);
          await shot(page, `time-sections-${name}-${scheme}`);
        }
      }
      noProblems(problems);
      await context.close();
    });

    it('saves screenshots at laptop and phone widths, light and dark', async () => {
      for (const [name, width, height] of [['laptop', 1366, 900], ['phone', 390, 844]]) {
        for (const colorScheme of ['light', 'dark']) {
          const { page, context, problems } = await openPage(browser, url, { width, height, colorScheme });
          await shot(page, `default-${name}-${colorScheme}`);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          assert.ok(overflow <= 0, `no sideways scrolling at ${width}px (overflow ${overflow}px)`);
          noProblems(problems);
          await context.close();
        }
      }
    });
  });
}
