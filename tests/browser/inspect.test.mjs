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
        result.time.ops = [
          { name: 'linear_qkv', kind: 'gemm', count: 20, flops: 2.1e12, bytes: 3.4e8, kernels: 1, time_s: 0.0041, efficiency: 0.63, efficiency_source: 'fitted' },
          { name: 'core_attention', kind: 'attention', count: 20, flops: 4.3e12, bytes: 1e8, kernels: 1, time_s: 0.0072, efficiency: 0.6, efficiency_source: 'microbenchmark' },
          { name: 'input_layernorm', kind: 'memory', count: 20, flops: 0, bytes: 6.7e7, kernels: 1, time_s: 0.00008, efficiency: 0.42, efficiency_source: 'fitted' },
        ];
        result.memory.ops = { stage: 0, columns: ['block', 'op', 'saved_bytes', 'forward_transient_bytes', 'backward_transient_bytes'],
          rows: [['layer 0-19 (dense)', 'linear_qkv', 6.7e7, 1.3e8, 2.6e8], ['layer 0-19 (dense)', 'core_attention', 1.6e7, 0, 3.4e7]] };
        result.memory.timeline = { columns: ['event', 'allocated_bytes', 'reserved_bytes', 'pass'], stages: result.memory.stages.map((st, k) => ({
          stage: st.stage, points: [0, 10, 20, 30, 40, 50].map((e, i) => [e, st.peak_bytes * (0.5 + 0.1 * ((i + k) % 5)), st.reserved_bytes, `F mb ${i} chunk 0`]) })) };
      });
      assert.equal(await page.isVisible('#ops'), true);
      assert.deepEqual(await page.$$eval('#ops-time thead th', (ths) => ths.map((th) => th.textContent)),
        ['Op', 'Kind', 'Count', 'FLOPs', 'HBM bytes (MiB)', 'Kernels', 'Time (ms)', 'Efficiency', 'Efficiency from']);
      assert.equal(await page.locator('#ops-time tbody tr').count(), 3);
      assert.match(await page.textContent('#ops-time tbody tr:first-child'), /linear_qkv.*63\.0 %fitted/);
      assert.equal(await page.locator('#ops-memory tbody tr').count(), 2);
      assert.equal(await page.isVisible('#memory-timeline'), true);
      assert.equal(await page.locator('#memory-timeline-chart path.line-allocated').count(), 1);
      assert.equal(await page.inputValue('#memory-timeline-stage'), String(await page.evaluate(async () => (await import('./state/store.js')).store.get().result.memory.peak_stage)));
      await shots(page, artifacts, 'inspect-ops-memory-timeline', { sizes: [['laptop', 1366, 900]] });
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
