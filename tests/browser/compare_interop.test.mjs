// Compare, Import and Export in headless Chromium: two pinned configs that
// survive a reload through the link (and an old link that still decodes),
// paste-import of a Megatron-LM command line and a Hugging Face
// config.json, importer errors by path, Megatron-LM flags exported and
// imported back to the same config, and the result and chart downloads.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { act, close, launchBrowser, memoryTable, openPage, settled, estimates } from './harness.mjs';
import { cli, download, screenshots } from './tools_harness.mjs';

const data = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data');
const LLAMA8B = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64&tp=2&sp=1&pp=2&rc=selective';

// Both configs canonical (presets expanded, defaults written), names aside.
function canonical(binary, config) {
  const envelope = cli(binary, ['export', 'json'], config);
  assert.equal(envelope.ok, true, JSON.stringify(envelope.errors));
  const strip = (value) => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'name' && k !== 'preset').map(([k, v]) => [k, strip(v)]));
    }
    return value;
  };
  return strip(envelope.result.config);
}

const pageConfig = (page) => page.evaluate(async () => {
  const { store } = await import('./state/store.js');
  const { toConfig } = await import('./state/config.js');
  return toConfig(store.get().spec);
});

export function compareInteropTests({ url, cli: binary, artifacts }) {
  let browser;
  const overflow = [];
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });

  describe('the Compare tab', () => {
    it('pins two configs, shows them side by side, and keeps them through a reload of the link', async () => {
      const { page, context, problems } = await openPage(browser, `${url}${LLAMA8B}`);
      await page.click('#pin-config');
      await act(page, () => page.fill('#f-training-tp', '4'));
      await page.click('#pin-config');
      await page.click('#pin-config');  // the same config twice is pinned once
      await page.click('#tab-compare');
      const hash = await page.evaluate(() => location.hash);
      assert.match(hash, /&view=compare&c1=m:llama3-8b;s:h100-sxm-80gb;n:16;.*tp:2;.*&c2=.*tp:4;/);
      const values = async (p) => {
        await p.waitForFunction(() => document.querySelectorAll('#compare-table tr[data-row="peak"] [data-value]').length === 2);
        return p.$$eval('#compare-table tr[data-row="peak"] [data-value], #compare-table tr[data-row="step"] [data-value]',
          (spans) => spans.map((s) => Number(s.dataset.value)));
      };
      const shown = await values(page);
      assert.equal(shown.length, 4);
      assert.ok(shown[0] > shown[1], 'tp 2 needs more memory per GPU than tp 4');
      assert.equal(await page.getAttribute('#compare-table tr[data-row="parallel"]', 'class'), 'differs');
      assert.equal(await page.locator('#compare-memory rect.seg').count() > 4, true);
      overflow.push(...await screenshots(page, artifacts, 'compare'));
      // The link alone brings both back.
      const reloaded = await openPage(browser, `${url}${hash}`);
      assert.equal(await reloaded.page.evaluate(() => location.hash), hash);
      assert.equal(await reloaded.page.isVisible('#view-compare'), true);
      assert.deepEqual(await values(reloaded.page), shown);
      // The calculator's own numbers match the pinned ones.
      await reloaded.page.click('#compare-table button[data-pin="1"]:not(.unpin)');
      await reloaded.page.waitForFunction(() => /&tp=4&/.test(location.hash) && !/view=/.test(location.hash));
      await settled(reloaded.page);
      assert.equal(Number(await reloaded.page.getAttribute('#fact-peak', 'data-value')), shown[1]);
      assert.deepEqual(reloaded.problems, []);
      await reloaded.context.close();
      // Unpin one: the link follows.
      await page.click('#compare-table button.unpin[data-pin="0"]');
      assert.doesNotMatch(await page.evaluate(() => location.hash), /c2=/);
      assert.equal(await page.locator('#compare-table thead th').count(), 2);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('reads links without pins as before, and names unreadable pins', async () => {
      const { page, context, problems } = await openPage(browser, `${url}${LLAMA8B}&c1=tp:abc;m:nope&c9=1`);
      const items = await page.$$eval('#banner li', (lis) => lis.map((li) => li.textContent));
      assert.ok(items.some((t) => t.includes('c1: tp=abc')), JSON.stringify(items));
      assert.ok(items.some((t) => t.includes('c9=1 (at most 4 pinned configs)')), JSON.stringify(items));
      assert.equal(await page.evaluate(() => location.hash), LLAMA8B, 'the old-format part is kept as it was');
      assert.deepEqual(problems, []);
      await context.close();
    });
  });

  describe('the Import dialog', () => {
    it('imports a pasted Megatron-LM command line into the form, with the importer\'s notes', async () => {
      const script = fs.readFileSync(path.join(data, 'megatron/llama3_8b_fp8.sh'), 'utf8');
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#open-import');
      assert.equal(await page.isVisible('#import-dialog'), true);
      await page.click('#import-kind-megatron');
      await page.fill('#import-megatron-text', script);
      await page.selectOption('#import-megatron-system', 'h100-sxm-80gb');
      await act(page, () => page.click('#import-run'));
      assert.match(await page.textContent('#import-outcome .outcome.good'), /Imported from Megatron-LM/);
      assert.ok(await page.locator('#import-outcome .outcome.notes li').count() >= 1, 'the importer\'s notes are listed');
      const expected = cli(binary, ['import', 'megatron'], script).result.config;
      const form = {
        '#f-model-num_layers': '32', '#f-model-hidden_size': '4096', '#f-model-num_kv_heads': '8', '#f-model-ffn_hidden_size': '14336',
        '#f-training-seq_len': '8192', '#f-training-global_batch_size': '128', '#f-training-cp': '2', '#f-system-num_gpus': '8',
      };
      for (const [selector, value] of Object.entries(form)) assert.equal(await page.inputValue(selector), value, selector);
      assert.equal(await page.inputValue('#f-training-dtype'), 'fp8');
      assert.deepEqual(canonical(binary, await pageConfig(page)), canonical(binary, expected), 'the page holds the imported config');
      overflow.push(...await screenshots(page, artifacts, 'import-dialog', { fullPage: false }));
      // Bad flags: errors by path, nothing applied.
      const hash = await page.evaluate(() => location.hash);
      await page.fill('#import-megatron-text', 'pretrain_gpt.py --num-layers abc --hidden-size 4096');
      await page.click('#import-run');
      await page.waitForSelector('#import-outcome .outcome.bad');
      assert.match(await page.textContent('#import-outcome .outcome.bad'), /\/args\/--num-layers/);
      assert.equal(await page.evaluate(() => location.hash), hash);
      await page.click('#import-close');
      assert.equal(await page.isVisible('#import-dialog'), false);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('imports a Hugging Face config.json (pasted or uploaded) as the model, keeping the plan', async () => {
      const text = fs.readFileSync(path.join(data, 'hf/meta-llama-3-8b.json'), 'utf8');
      const { page, context, problems } = await openPage(browser, `${url}${LLAMA8B}`);
      await page.click('#open-import');
      await page.click('#import-kind-hf');
      await page.setInputFiles('#import-hf-text-file', { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(text) });
      await page.waitForFunction(() => document.getElementById('import-hf-text').value.length > 100);
      await act(page, () => page.click('#import-run'));
      // Llama 3 8B's config.json is the llama3-8b preset: the preset is selected.
      assert.equal(await page.inputValue('#f-model-preset'), 'llama3-8b');
      assert.match(await page.textContent('#import-outcome'), /equals the preset "Llama 3 8B"/);
      assert.equal(await page.inputValue('#f-model-num_layers'), '32');
      assert.equal(await page.inputValue('#f-model-vocab_size'), '128256');
      assert.equal(await page.inputValue('#f-training-tp'), '2', 'the training plan stays');
      const hf = cli(binary, ['import', 'hf'], text).result.model;
      assert.deepEqual(canonical(binary, { ...(await pageConfig(page)), model: hf }), canonical(binary, await pageConfig(page)));
      // Same numbers as the llama3-8b preset it describes.
      const table = await memoryTable(page);
      const preset = await openPage(browser, `${url}${LLAMA8B}`);
      assert.deepEqual(await memoryTable(preset.page), table);
      await preset.context.close();
      // An architecture the importer does not know: a clear error, by path.
      await page.fill('#import-hf-text', '{"model_type": "mamba", "hidden_size": 4096}');
      await page.click('#import-run');
      await page.waitForSelector('#import-outcome .outcome.bad');
      assert.match(await page.textContent('#import-outcome .outcome.bad'), /\/hf/);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });
  });

  describe('the Export dialog', () => {
    it('exports Megatron-LM flags that import back to the same config', async () => {
      const { page, context, problems } = await openPage(browser, `${url}${LLAMA8B}&vpp=2&z=1&ogr=1`);
      const before = await pageConfig(page);
      const numbers = { table: await memoryTable(page), step: await page.getAttribute('#iteration-time strong', 'data-seconds') };
      await page.click('#open-export');
      await page.waitForFunction(() => /pretrain_gpt\.py/.test(document.getElementById('export-megatron-text').value));
      const flags = await page.inputValue('#export-megatron-text');
      assert.match(flags, /--tensor-model-parallel-size 2/);
      await page.click('#export-megatron-copy');
      await page.waitForSelector('#export-status:text("Flags copied")');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), flags);
      overflow.push(...await screenshots(page, artifacts, 'export-dialog', { fullPage: false }));
      await page.click('#export-close');
      await page.click('#open-import');
      await page.click('#import-kind-megatron');
      await page.fill('#import-megatron-text', flags);
      await page.selectOption('#import-megatron-system', 'h100-sxm-80gb');
      await act(page, () => page.click('#import-run'));
      await page.click('#import-close');
      const back = await pageConfig(page);
      assert.equal(back.model.preset, 'llama3-8b', 'the flags describe Llama 3 8B exactly: the preset is selected');
      assert.deepEqual(canonical(binary, back), canonical(binary, before));
      assert.deepEqual(await memoryTable(page), numbers.table);
      assert.equal(await page.getAttribute('#iteration-time strong', 'data-seconds'), numbers.step);
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('downloads the config, the result as JSON and CSV, and the charts as SVG and PNG', async () => {
      const { page, context, problems } = await openPage(browser, `${url}${LLAMA8B}`);
      await page.waitForSelector('#timeline-chart svg');
      await page.click('#open-export');
      const config = JSON.parse((await download(page, '#export-config-json')).bytes);
      assert.deepEqual(config, await pageConfig(page));
      const canonicalConfig = JSON.parse((await download(page, '#export-canonical-json')).bytes);
      assert.equal(canonicalConfig.model.num_layers, 32);
      const result = JSON.parse((await download(page, '#export-result-json')).bytes);
      assert.deepEqual(result.result.memory, cli(binary, ['estimate'], config).result.memory);
      const csv = (await download(page, '#export-result-csv')).bytes.toString('utf8');
      assert.match(csv, /^section,stage,metric,value,unit\n/);
      assert.equal(csv, cli(binary, ['export', 'csv'], config).result.csv, 'the CLI\'s CSV');
      for (const chart of ['memory', 'step-time', 'timeline']) {
        const svg = await download(page, `#export-svg-${chart}`);
        const text = svg.bytes.toString('utf8');
        assert.equal(svg.name, `trainsim-${chart}.svg`);
        assert.match(text, /^<\?xml[^>]*>\n<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
        assert.doesNotMatch(text, / class="/, 'styles are written in, not left to the page\'s stylesheet');
        assert.match(text, /fill="rgb\(/);
        const png = await download(page, `#export-png-${chart}`);
        assert.deepEqual([...png.bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], `${chart}.png is a PNG`);
        assert.ok(png.bytes.length > 1000);
      }
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('has no sideways scrolling on the Compare tab and in the dialogs', () => {
      assert.deepEqual(overflow, []);
    });
  });
}
