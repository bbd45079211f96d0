// Issue 17 in headless Chromium, part 2: inspect and take elsewhere (the
// per-op table and memory over the step when the core reports them, a
// Hugging Face id fetched on a click, the importer's notes and missing
// values).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { act, launchBrowser, openPage } from './harness.mjs';
import { injectResult, shots } from './issue17_harness.mjs';
import { download } from './tools_harness.mjs';

const data = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data');

export function inspectTests({ url, artifacts }) {
  let browser;
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });
  const noProblems = (problems) => assert.deepEqual(problems, [], 'the page reported errors');

  describe('inspect and take elsewhere', () => {
    it('tables the ops of the critical stage and draws memory over the step when the core reports them', async () => {
      const { page, context, problems } = await openPage(browser, url);
      assert.equal(await page.isVisible('#ops'), Boolean(await page.evaluate(async () => {
        const { store } = await import('./state/store.js');
        return store.get().result.time?.ops?.length || store.get().result.memory.ops?.rows?.length;
      })));
      await injectResult(page, (result) => {
        // Keys in the core's (alphabetical) order, one the page does not know at the end.
        result.time.ops = [
          { bytes: 3.4e8, count: 20, efficiency: 0.63, efficiency_source: 'fitted', flops: 2.1e12, kernels: 1, kind: 'gemm', name: 'linear_qkv', time_s: 0.0041, zz_new: 1 },
          { bytes: 1e8, count: 20, efficiency: 0.6, efficiency_source: 'microbenchmark', flops: 4.3e12, kernels: 1, kind: 'attention', name: 'core_attention', time_s: 0.0072, zz_new: 2 },
          { bytes: 6.7e7, count: 20, efficiency: 0.42, efficiency_source: 'fitted', flops: 0, kernels: 1, kind: 'memory', name: 'input_layernorm', time_s: 0.00008, zz_new: 3 },
        ];
        result.memory.ops = { stage: 0, columns: ['block', 'op', 'saved_bytes', 'forward_transient_bytes', 'backward_transient_bytes'],
          rows: [['layer 0-19 (dense)', 'linear_qkv', 6.7e7, 1.3e8, 2.6e8], ['layer 0-19 (dense)', 'core_attention', 1.6e7, 0, 3.4e7]] };
        result.memory.timeline = { columns: ['event', 'allocated_bytes', 'reserved_bytes', 'pass'], stages: result.memory.stages.map((st, k) => ({
          stage: st.stage, points: [0, 10, 20, 30, 40, 50].map((e, i) => [e, st.peak_bytes * (0.5 + 0.1 * ((i + k) % 5)), st.reserved_bytes, `F mb ${i} chunk 0`]) })) };
      });
      assert.equal(await page.isVisible('#ops'), true);
      assert.deepEqual(await page.$$eval('#ops-time thead th', (ths) => ths.map((th) => th.textContent)),
        ['Op', 'Kind', 'Count', 'Time (ms)', 'FLOPs', 'HBM bytes (MiB)', 'Efficiency', 'Efficiency from', 'Kernels', 'zz new']);
      assert.equal(await page.locator('#ops-time tbody tr').count(), 3);
      assert.match(await page.textContent('#ops-time tbody tr:first-child'), /^linear_qkvgemm20.*63\.0 %fitted/);
      assert.equal(await page.locator('#ops-memory tbody tr').count(), 2);
      assert.equal(await page.isVisible('#memory-timeline'), true);
      assert.equal(await page.locator('#memory-timeline-chart path.line-allocated').count(), 1);
      assert.equal(await page.inputValue('#memory-timeline-stage'), String(await page.evaluate(async () => (await import('./state/store.js')).store.get().result.memory.peak_stage)));
      await shots(page, artifacts, 'inspect-ops-memory-timeline', { sizes: [['laptop', 1366, 900]] });
      noProblems(problems);
      await context.close();
    });

    it('explains every memory part and time part: a click opens the core\'s formula, this plan\'s values and the source', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const result = await page.evaluate(async () => (await import('./state/store.js')).store.get().result);
      const explained = new Map(result.explanations.map((x) => [x.part, x]));
      // Every stage's memory parts and every time part the page shows can be opened.
      for (const stage of result.memory.stages) {
        for (const key of ['parameters_bytes', 'gradients_bytes', 'optimizer_bytes', 'buffers_bytes', 'activations_bytes',
          'transient_bytes', 'peak_bytes', 'reserved_bytes', 'outside_allocator_bytes', 'device_bytes']) {
          assert.ok(explained.has(`/memory/stages/${stage.stage}/${key}`), `${key} of stage ${stage.stage}`);
        }
      }
      const timeKeys = await page.$$eval('#time-parts li', (lis) => lis.map((li) => li.dataset.key));
      assert.ok(timeKeys.length >= 3, timeKeys.join());
      assert.deepEqual(await page.$$eval('#time-parts li', (lis) => lis.filter((li) => !li.dataset.explain).map((li) => li.dataset.key)), [], 'every shown time part opens');
      await page.click('#memory-numbers summary');
      const cells = await page.$$eval('#memory-table td[data-explain]', (tds) => tds.map((td) => td.dataset.explain));
      assert.equal(cells.length, result.memory.stages.length * 10);
      // A memory number: the dialog shows the core's formula, the values and the source.
      const pointer = `/memory/stages/${result.memory.peak_stage}/optimizer_bytes`;
      await page.click(`#memory-table td[data-explain="${pointer}"]`);
      await page.waitForSelector('#explain-dialog[open]');
      const x = explained.get(pointer);
      assert.equal(x.value, result.memory.stages.find((st) => st.stage === result.memory.peak_stage).optimizer_bytes, 'the number clicked');
      assert.match(await page.textContent('.explain-value'), /^\d[\d.]* (GiB|MiB) \(/);
      assert.equal(await page.textContent('#explain-title'), `Optimizer states, stage ${result.memory.peak_stage}`);
      assert.equal(await page.textContent('#explain-formula'), x.formula.replace(/ \* /g, ' × '));
      assert.deepEqual(await page.$$eval('#explain-terms tbody tr', (trs) => trs.map((tr) => [tr.dataset.symbol, Number(tr.dataset.value)])),
        x.terms.map((t) => [t.symbol, t.value]));
      // The formula again with this plan's values: each term as its row shows it, no symbol left.
      const values = await page.textContent('#explain-values');
      const shown = await page.$$eval('#explain-terms tbody tr', (trs) => trs.map((tr) => [tr.dataset.symbol, tr.cells[1].textContent]));
      for (const [symbol, text] of shown) {
        assert.ok(values.includes(text), `${symbol} = ${text} in "${values}"`);
        assert.doesNotMatch(values, new RegExp(`\\b${symbol}\\b`), `${symbol} replaced in "${values}"`);
      }
      assert.equal(await page.textContent('#explain-source'), x.source);
      assert.match(x.source, /distrib_optimizer\.py/);
      await shots(page, artifacts, 'explain-memory', { fullPage: false, sizes: [['laptop', 1366, 900], ['phone', 390, 844]], schemes: ['light'] });
      // On a phone the terms and the source wrap inside the dialog (nothing cut off at its edge).
      await page.setViewportSize({ width: 390, height: 844 });
      const overflow = await page.evaluate(() => {
        const body = document.querySelector('#explain-dialog .dialog-body').getBoundingClientRect();
        return ['#explain-terms', '#explain-source', '#explain-values'].map((id) => [id, document.querySelector(id).getBoundingClientRect().right - body.right])
          .filter(([, beyond]) => beyond > 0.5);
      });
      assert.deepEqual(overflow, [], 'wider than the dialog on a phone');
      await page.setViewportSize({ width: 1366, height: 900 });
      await page.click('#explain-close');
      assert.equal(await page.isVisible('#explain-dialog'), false);
      // A time part, from the keyboard.
      const key = timeKeys.includes('bubble_s') ? 'bubble_s' : timeKeys[0];
      await page.focus(`#time-parts li[data-key="${key}"]`);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#explain-dialog[open]');
      assert.equal(await page.getAttribute('#explain-dialog', 'data-part'), `/time/breakdown/${key}`);
      assert.equal(await page.textContent('#explain-formula'), explained.get(`/time/breakdown/${key}`).formula.replace(/ \* /g, ' × '));
      assert.ok(await page.locator('#explain-terms tbody tr').count() >= 1);
      await shots(page, artifacts, 'explain-time', { fullPage: false, sizes: [['laptop', 1366, 900]], schemes: ['light', 'dark'] });
      await page.keyboard.press('Escape');
      // A bar segment of the memory chart opens its part too.
      await page.click(`#memory-chart rect.seg[data-explain$="/parameters_bytes"]`);
      await page.waitForSelector('#explain-dialog[open]');
      assert.match(await page.textContent('#explain-title'), /^Parameters, stage \d+$/);
      await page.keyboard.press('Escape');
      noProblems(problems);
      await context.close();
    });

    it('sorts the core\'s per-op table and draws the core\'s own memory replay, with no injected result', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const result = await page.evaluate(async () => (await import('./state/store.js')).store.get().result);
      assert.ok(result.time.ops.length > 3, 'the core reports the critical stage\'s ops');
      assert.ok(result.time.ops.some((op) => /measured_table|shape_model|microbenchmark|fitted/.test(op.efficiency_source)));
      assert.ok(result.memory.ops.rows.length > 3, 'and the peak stage\'s ops\' memory');
      assert.equal(await page.isVisible('#ops'), true);
      assert.equal(await page.locator('#ops-time tbody tr').count(), Math.min(400, result.time.ops.length));
      const values = async (column) => page.$$eval(`#ops-time tbody td:nth-child(${column})`, (tds) => tds.map((td) => Number(td.dataset.value)));
      const heads = await page.$$eval('#ops-time thead th', (ths) => ths.map((th) => th.dataset.key));
      assert.deepEqual(heads.slice(0, 4), ['name', 'kind', 'count', 'time_s'], 'the op first, then its time');
      const memoryHeads = await page.$$eval('#ops-memory thead th', (ths) => ths.map((th) => th.dataset.key));
      assert.deepEqual(memoryHeads.slice(0, 2), ['block', 'op']);
      const timeColumn = heads.indexOf('time_s') + 1;
      await page.click('#ops-time th[data-key="time_s"] button');
      const down = await values(timeColumn);
      assert.deepEqual(down, [...down].sort((a, b) => b - a), 'largest time first');
      assert.equal(await page.getAttribute('#ops-time th[data-key="time_s"]', 'aria-sort'), 'descending');
      assert.equal(down[0], Math.max(...result.time.ops.map((op) => op.time_s)));
      await page.click('#ops-time th[data-key="time_s"] button');
      const up = await values(timeColumn);
      assert.deepEqual(up, [...up].sort((a, b) => a - b));
      assert.equal(await page.getAttribute('#ops-time th[data-key="time_s"]', 'aria-sort'), 'ascending');
      await page.click('#ops-memory th[data-key="saved_bytes"] button');
      const savedColumn = (await page.$$eval('#ops-memory thead th', (ths) => ths.map((th) => th.dataset.key))).indexOf('saved_bytes') + 1;
      const saved = await page.$$eval(`#ops-memory tbody td:nth-child(${savedColumn})`, (tds) => tds.map((td) => Number(td.dataset.value)));
      assert.deepEqual(saved, [...saved].sort((a, b) => b - a));
      // Memory over the step: the allocator replay's own points, per stage.
      const replayed = result.memory.timeline.stages.filter((st) => st.points.length > 0);
      assert.ok(replayed.length > 0, 'the core reports memory over the step');
      assert.equal(await page.isVisible('#memory-timeline'), true);
      assert.equal(await page.locator('#memory-timeline-stage option').count(), replayed.length);
      assert.equal(await page.locator('#memory-timeline-chart path.line-allocated').count(), 1);
      if (replayed.length > 1) {
        const before = await page.getAttribute('#memory-timeline-chart path.line-allocated', 'd');
        const other = replayed.find((st) => st.stage !== result.memory.peak_stage).stage;
        await page.selectOption('#memory-timeline-stage', String(other));
        assert.notEqual(await page.getAttribute('#memory-timeline-chart path.line-allocated', 'd'), before);
        assert.match(await page.getAttribute('#memory-timeline-chart svg', 'aria-label'), new RegExp(`stage ${other} `));
      }
      await page.locator('#ops').scrollIntoViewIfNeeded();
      await shots(page, artifacts, 'ops-sorted-real', { fullPage: false, sizes: [['laptop', 1366, 900]], schemes: ['light'] });
      noProblems(problems);
      await context.close();
    });

    it('downloads one step as a Perfetto trace from the Export dialog: one process per stage, ending at the step time', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const result = await page.evaluate(async () => (await import('./state/store.js')).store.get().result);
      await page.click('#open-export');
      const file = await download(page, '#export-trace');
      assert.equal(file.name, 'trainsim-trace.json');
      const trace = JSON.parse(file.bytes);
      assert.equal(trace.displayTimeUnit, 'ms');
      assert.ok(Array.isArray(trace.traceEvents) && trace.traceEvents.length > 10);
      for (const e of trace.traceEvents) {
        for (const key of ['name', 'ph', 'pid', 'tid', 'ts']) assert.ok(key in e, `${key} in ${JSON.stringify(e)}`);
      }
      const processes = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name');
      assert.equal(processes.length, result.time.stages.length);
      const end = Math.max(...trace.traceEvents.filter((e) => e.ph === 'X').map((e) => e.ts + e.dur));
      assert.ok(Math.abs(end - result.time.iteration_s * 1e6) <= 1e-6 * result.time.iteration_s * 1e6 + 1, `${end} us vs ${result.time.iteration_s} s`);
      assert.ok(trace.traceEvents.some((e) => e.ph === 'C'), 'memory counters');
      assert.equal(await page.textContent('#export-status'), '');
      noProblems(problems);
      await context.close();
    });

    it('fetches a Hugging Face config.json by model id on a click, and says why when it cannot', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
      assert.match(csp, /connect-src 'self' https:\/\/huggingface\.co;/);
      const qwen = fs.readFileSync(path.join(data, 'hf/qwen3-32b.json'), 'utf8');
      const requests = [];
      await context.route('https://huggingface.co/**', (route) => {
        requests.push(route.request().url());
        const id = new URL(route.request().url()).pathname;
        if (id.startsWith('/Qwen/Qwen3-32B/')) return route.fulfill({ status: 200, contentType: 'application/json', body: qwen });
        if (id.startsWith('/meta-llama/')) return route.fulfill({ status: 401, body: 'gated' });
        return route.abort('internetdisconnected');
      });
      await page.click('#open-import');
      assert.equal(await page.getAttribute('#import-kind-hf', 'aria-selected'), 'true', 'Hugging Face first');
      await page.fill('#import-hf-id', 'Qwen/Qwen3-32B');
      assert.equal(requests.length, 0, 'nothing is fetched before the click');
      await act(page, () => page.click('#import-hf-fetch'));
      assert.deepEqual(requests, ['https://huggingface.co/Qwen/Qwen3-32B/resolve/main/config.json']);
      await page.waitForSelector('#import-outcome .outcome.good');
      assert.equal(await page.inputValue('#f-model-preset'), 'qwen3-32b', 'equal to the preset: the preset is selected');
      assert.match(await page.textContent('#import-outcome'), /equals the preset/);
      await page.fill('#import-hf-id', 'meta-llama/Llama-3.1-8B');
      await page.click('#import-hf-fetch');
      await page.waitForSelector('#import-hf-status[data-state="bad"]');
      assert.match(await page.textContent('#import-hf-status'), /gated or private.*paste it below/);
      await page.fill('#import-hf-id', 'someone/offline-model');
      await page.click('#import-hf-fetch');
      await page.waitForFunction(() => /Could not reach huggingface\.co/.test(document.getElementById('import-hf-status').textContent));
      await page.fill('#import-hf-id', 'not an id');
      await page.click('#import-hf-fetch');
      assert.match(await page.textContent('#import-hf-status'), /expected a model id such as Qwen\/Qwen3-32B/);
      assert.equal(await page.isVisible('#import-hf-text'), true, 'pasting stays available');
      await shots(page, artifacts, 'import-hf-offline', { fullPage: false });
      noProblems(problems.filter((p) => !/huggingface\.co|Failed to load resource/.test(p)));
      await context.close();
    });

    it('keeps the importer\'s notes on the page and asks for missing values', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#open-import');
      await page.click('#import-kind-megatron');
      const base = '--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --max-position-embeddings 4096 --micro-batch-size 1 '
        + '--global-batch-size 64 --vocab-size 32000 --tokenizer-type NullTokenizer --seq-lenght 4096 --bf16';
      await page.fill('#import-megatron-text', base);
      await page.click('#import-run');
      await page.waitForSelector('#import-missing:not([hidden])');
      const asked = await page.$$eval('#import-missing input', (inputs) => inputs.map((i) => i.dataset.name));
      assert.ok(asked.includes('--seq-length'), asked.join());
      await page.fill('#import-missing input[data-name="--seq-length"]', '4096');
      await act(page, () => page.click('#import-run'));
      await page.waitForSelector('#import-outcome .outcome.good');
      assert.match(await page.inputValue('#import-megatron-text'), /--seq-length 4096$/);
      await page.click('#import-close');
      assert.equal(await page.isVisible('#banner'), true, 'the notes stay after the dialog closes');
      const items = await page.$$eval('#banner li', (lis) => lis.map((li) => li.textContent));
      assert.ok(items.some((t) => t.includes('--seq-lenght is not a Megatron-LM flag trainsim knows: ignored')), items.join('\n'));
      await shots(page, artifacts, 'import-notes-banner', { sizes: [['laptop', 1366, 900]] });
      noProblems(problems);
      await context.close();
    });
  });
}
