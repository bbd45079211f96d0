// Issue 17 in headless Chromium, part 1: first contact (how-to, example
// links, glossary, one Import and one Export button), never wrong on screen
// (stale panels marked, the root cause on the edited field, superseded
// keystrokes, cleared fields, export of a plan that does not fit, the
// verdict and its contrast) and a way forward (one-click suggestions, Find a
// plan that fits, the plan summary, DP auto, the peak stage's story).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { act, launchBrowser, openPage, settled } from './harness.mjs';
import { injectResult, contrastOf, shots } from './issue17_harness.mjs';

const EXAMPLE_VERDICTS = ['fits', 'tight'];

export function firstContactTests({ url, artifacts }) {
  let browser;
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });
  const noProblems = (problems) => assert.deepEqual(problems, [], 'the page reported errors');

  describe('first contact', () => {
    it('says how to use it, offers four examples and a glossary, and one Import and one Export button', async () => {
      const { page, context, problems } = await openPage(browser, url);
      assert.match(await page.textContent('#howto'), /How to use:.*model.*GPU system.*parallel plan/);
      const examples = await page.$$eval('#examples a', (as) => as.map((a) => ({ text: a.textContent, href: a.getAttribute('href') })));
      assert.equal(examples.length, 4);
      assert.deepEqual(examples.map((e) => /70B on 64 H100|DeepSeek-V3 on 2048|128k|Search/.test(e.text)), [true, true, true, true]);
      await page.click('#glossary summary');
      const terms = await page.$$eval('#glossary dt', (dts) => dts.map((dt) => dt.textContent));
      for (const term of ['Reserved', 'Transient', 'Buffers', 'Critical stage', 'MFU convention']) assert.ok(terms.includes(term), term);
      const buttons = await page.$$eval('#toolbar button', (bs) => bs.map((b) => b.textContent));
      assert.deepEqual(buttons, ['Copy link', 'Pin', 'Import…', 'Export…']);
      await shots(page, artifacts, 'first-contact');
      noProblems(problems);
      await context.close();
    });

    it('each example link loads as it reads, with a verdict and no banner', async () => {
      const first = await openPage(browser, url);
      const hrefs = await first.page.$$eval('#examples a', (as) => as.map((a) => a.getAttribute('href')));
      await first.context.close();
      for (const [i, href] of hrefs.entries()) {
        const { page, context, problems } = await openPage(browser, `${url}${href}`);
        assert.equal(await page.isVisible('#banner'), false, `no banner for ${href}`);
        const verdict = await page.getAttribute('#verdict', 'data-verdict');
        assert.ok(EXAMPLE_VERDICTS.includes(verdict), `${href}: ${verdict} ${await page.textContent('#verdict')}`);
        assert.equal(await page.isVisible(href.includes('view=search') ? '#view-search' : '#view-calc'), true);
        if (i === 1) await shots(page, artifacts, 'example-deepseek-v3', { sizes: [['laptop', 1366, 900]] });
        noProblems(problems);
        await context.close();
      }
    });
  });

  describe('never wrong on screen', () => {
    it('marks every result panel "last valid result" while the configuration is invalid', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const panels = ['#memory', '#time', '#throughput', '#timeline'];
      for (const id of panels) assert.equal(await page.getAttribute(id, 'data-stale'), 'false', id);
      await act(page, () => page.fill('#f-training-tp', '16'));
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'invalid');
      for (const id of panels) {
        assert.equal(await page.getAttribute(id, 'data-stale'), 'true', `${id} marked stale`);
        assert.equal(await page.isVisible(`${id} > .stale-badge`), true, `${id} says so`);
        const opacity = await page.$eval(`${id} > :not(h2):not(.stale-badge)`, (el) => Number(getComputedStyle(el).opacity));
        assert.ok(opacity < 0.5, `${id} dimmed (${opacity})`);
      }
      assert.equal(await page.isVisible('#facts-stale'), true);
      // What is dimmed: the numbers; what is not: the verdict and the problems (opacity through every ancestor).
      const shown = (selector) => page.$eval(selector, (el) => {
        let opacity = 1;
        for (let node = el; node; node = node.parentElement) opacity *= Number(getComputedStyle(node).opacity);
        return opacity;
      });
      assert.ok(await shown('#facts') < 0.5, 'the headline numbers are dimmed');
      for (const id of ['#verdict', '#problems', '#f-training-tp']) assert.equal(await shown(id), 1, `${id} at full strength`);
      await shots(page, artifacts, 'invalid-stale');
      await act(page, () => page.fill('#f-training-tp', '8'));
      for (const id of panels) assert.equal(await page.getAttribute(id, 'data-stale'), 'false', `${id} restored`);
      noProblems(problems);
      await context.close();
    });

    it('puts the root cause on the field just edited', async () => {
      const { page, context, problems } = await openPage(browser, url);
      // tp = 16 breaks tp's own rule: the error is on tp, marked as the field edited, listed first.
      await act(page, () => page.fill('#f-training-tp', '16'));
      assert.match(await page.textContent('[data-path="/training/tp"] .field-error'), /must divide num_kv_heads \(8\), got 16/);
      assert.equal(await page.getAttribute('[data-path="/training/tp"]', 'class').then((c) => c.includes('edited')), true);
      assert.match(await page.textContent('#problems li:first-child'), /^\/training\/tp: /, 'the edited field first');
      // tp = 3 on 64 GPUs: the core names the GPU count; the edited field says its change broke that rule.
      await act(page, () => page.fill('#f-training-tp', '3'));
      const tpCause = page.locator('[data-path="/training/tp"] .field-cause');
      assert.equal(await tpCause.isVisible(), true);
      assert.match(await tpCause.textContent(), /This change broke a rule: GPUs: .*multiple of tp\*pp\*cp \(12\)/);
      await shots(page, artifacts, 'root-cause-tp3', { sizes: [['laptop', 1366, 900]] });
      await tpCause.locator('button').click();
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-system-num_gpus', 'Go there focuses the field the rule names');
      // A change that breaks a rule named on another field says so where it was made:
      // seq_len 8190 is not a multiple of tp = 8 (sequence parallelism).
      await act(page, () => page.fill('#f-training-tp', '8'));
      await act(page, () => page.fill('#f-training-seq_len', '8190'));
      assert.match(await page.textContent('[data-path="/training/tp"] .field-error'), /must divide seq_len/);
      const cause = page.locator('[data-path="/training/seq_len"] .field-cause');
      assert.equal(await cause.isVisible(), true);
      assert.match(await cause.textContent(), /This change broke a rule: TP: must divide seq_len/);
      assert.equal(await page.getAttribute('[data-path="/training/seq_len"]', 'class').then((c) => c.includes('edited')), true);
      noProblems(problems);
      await context.close();
    });

    it('drops the errors of superseded keystrokes ("1k" leaves nothing about "got 1")', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await act(page, () => page.fill('#f-training-global_batch_size', '1'));
      assert.match(await page.textContent('#problems'), /got 1/);
      await page.fill('#f-training-global_batch_size', '1k');
      await page.waitForSelector('[data-path="/training/global_batch_size"] .field-error:not([hidden])');
      const text = await page.evaluate(() => document.getElementById('view-calc').innerText);
      assert.doesNotMatch(text, /got 1\b/, 'no error of the keystroke before');
      assert.match(await page.textContent('[data-path="/training/global_batch_size"] .field-error'), /expected a number/);
      noProblems(problems);
      await context.close();
    });

    it('clearing a field means its default everywhere and never says "missing required key"', async () => {
      const { page, context, problems } = await openPage(browser, url);
      for (const [id, placeholder] of [['#f-training-seq_len', '8192'], ['#f-training-micro_batch_size', '1'], ['#f-model-hidden_size', ''],
        ['#f-system-num_gpus', '64'], ['#f-training-tp', null], ['#f-system-gpu-hbm_capacity_gib', '']]) {
        await act(page, () => page.fill(id, ''));
        const text = await page.evaluate(() => document.body.innerText);
        assert.doesNotMatch(text, /missing required key/, `${id} cleared`);
        assert.ok(['fits', 'tight', 'oom'].includes(await page.getAttribute('#verdict', 'data-verdict')), `${id} cleared: still a valid plan`);
        if (placeholder) assert.equal(await page.getAttribute(id, 'placeholder'), placeholder, `${id} shows its default`);
        await page.locator(id).blur();
      }
      // A custom model's field has no default: it asks for a value instead.
      await act(page, () => page.selectOption('#f-model-preset', 'custom'));
      await page.fill('#f-model-hidden_size', '');
      await page.waitForSelector('[data-path="/model/hidden_size"] .field-error:not([hidden])');
      assert.match(await page.textContent('[data-path="/model/hidden_size"] .field-error'), /enter a value/);
      assert.doesNotMatch(await page.evaluate(() => document.body.innerText), /missing required key/);
      noProblems(problems);
      await context.close();
    });

    it('warns in Export when the plan does not fit', async () => {
      const { page, context, problems } = await openPage(browser, `${url}#v=1&m=llama3-70b&s=h100-sxm-80gb&n=8&seq=8192&mbs=1&gbs=64&tp=8`);
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'oom');
      await page.click('#open-export');
      await page.waitForSelector('#export-warning:not([hidden])');
      assert.match(await page.textContent('#export-warning'), /does not fit.*run out of memory/);
      await shots(page, artifacts, 'export-oom-warning', { fullPage: false });
      await page.click('#export-close');
      noProblems(problems);
      await context.close();
    });

    it('text the form cannot read marks the results stale too', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.fill('#f-training-seq_len', 'abc');
      await page.waitForSelector('#memory[data-stale="true"] > .stale-badge');
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'invalid');
      await act(page, () => page.fill('#f-training-seq_len', '8192'));
      assert.equal(await page.getAttribute('#memory', 'data-stale'), 'false');
      noProblems(problems);
      await context.close();
    });

    it('no warning in Export for a plan that fits', async () => {
      const { page, context, problems } = await openPage(browser, url);
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'fits');
      await page.click('#open-export');
      await page.waitForSelector('#export-dialog[open]');
      assert.equal(await page.isVisible('#export-warning'), false);
      await page.click('#export-close');
      noProblems(problems);
      await context.close();
    });

    it('shows the core verdict: fits, tight (with its band) and out of memory, each readable (contrast >= 4.5)', async () => {
      const { page, context, problems } = await openPage(browser, url);
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const status of ['fits', 'tight', 'out_of_memory']) {
          await injectResult(page, (result, s) => {
            const usable = result.memory.capacity_bytes * 0.98;
            const device = { fits: 0.6, tight: 0.97, out_of_memory: 1.2 }[s] * usable;
            result.memory.verdict = { status: s, margin_bytes: usable - device, usable_bytes: usable, headroom_fraction: 0.05,
              device_bytes: device, stage: 0, reasons: s === 'out_of_memory' ? ['stage 0 needs more than the usable memory'] : [] };
          }, status);
          const shown = await page.getAttribute('#verdict', 'data-verdict');
          assert.equal(shown, { fits: 'fits', tight: 'tight', out_of_memory: 'oom' }[status]);
          assert.match(await page.textContent('#verdict'), { fits: /^Fits: .* usable/, tight: /^Tight: .*to spare.*reserve/, out_of_memory: /^Out of memory: stage 0/ }[status]);
          const ratio = await contrastOf(page, '#verdict');
          assert.ok(ratio >= 4.5, `${status} ${scheme}: contrast ${ratio.toFixed(2)}`);
          assert.equal(await page.locator('#memory-chart .usable-line').count(), 1);
          assert.equal(await page.locator('#memory-chart .tight-band').count(), 1);
          if (status === 'tight' && scheme === 'light') await shots(page, artifacts, 'verdict-tight', { sizes: [['laptop', 1366, 900]] });
        }
      }
      await act(page, () => page.fill('#f-training-tp', '16'));
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        const ratio = await contrastOf(page, '#verdict');
        assert.ok(ratio >= 4.5, `invalid ${scheme}: contrast ${ratio.toFixed(2)}`);
      }
      noProblems(problems);
      await context.close();
    });
  });

  describe('a way forward', () => {
    it('offers the core\'s suggestions as one-click fixes and "Find a plan that fits"', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await injectResult(page, (result) => {
        const usable = result.memory.capacity_bytes;
        result.fits = false;
        result.memory.verdict = { status: 'out_of_memory', margin_bytes: -5e9, usable_bytes: usable, headroom_fraction: 0.05,
          device_bytes: usable + 5e9, stage: 0, reasons: ['stage 0 needs 5 GB more'] };
        result.memory.suggestions = [
          { change: 'tp 8 -> 4 and pp 4 -> 8', set: { 'training.tp': '4', 'training.pp': '8' }, status: 'fits', margin_bytes: 3e9, device_bytes: usable - 3e9, iteration_s: 12.5 },
          { change: 'selective recompute', set: { 'training.recompute': '{"granularity": "selective"}' }, status: 'tight', margin_bytes: 1e9, device_bytes: usable - 1e9, iteration_s: 13 },
          { change: 'expandable segments', set: { 'training.not_a_page_field': 'true' }, status: 'fits', margin_bytes: 2e9, device_bytes: usable - 2e9, iteration_s: 0 },
        ];
      });
      assert.equal(await page.isVisible('#way-forward'), true);
      assert.equal(await page.locator('#suggestions button').count(), 3);
      assert.match(await page.textContent('#suggestions li:first-child'), /tp 8 -> 4 and pp 4 -> 8 — fits, .* to spare, step 12.5 s/);
      assert.equal(await page.isDisabled('#suggestions li:nth-child(3) button'), true, 'a key the page cannot set is not clickable');
      await shots(page, artifacts, 'way-forward-oom', { sizes: [['laptop', 1366, 900]] });
      await act(page, () => page.click('#suggestions li:nth-child(2) button'));
      assert.match(await page.evaluate(() => location.hash), /&rc=selective/);
      assert.equal(await page.inputValue('#f-training-recompute-granularity'), 'selective');
      // Find a plan that fits: the Search tab for this model, system and GPU count, started.
      await injectResult(page, (result) => { result.fits = false; result.memory.verdict = { status: 'out_of_memory', margin_bytes: -1, usable_bytes: 1, headroom_fraction: 0, device_bytes: 2, stage: 0, reasons: [] }; });
      await page.click('#find-plan');
      await page.waitForSelector('#view-search:not([hidden])');
      assert.equal(await page.inputValue('#search-gpus'), '64');
      assert.match(await page.textContent('#search-target'), /Llama 3 70B.*H100/);
      await page.waitForFunction(() => ['running', 'done'].includes(document.getElementById('search-status')?.dataset.status), null, { timeout: 60000 });
      noProblems(problems);
      await context.close();
    });

    it('sums up the plan by the verdict, shows DP as auto (2) and the peak stage\'s story', async () => {
      const { page, context, problems } = await openPage(browser, url);
      assert.equal(await page.textContent('#plan-summary'), '64 × H100 SXM 80GB · tp8 pp4 dp auto (2) · 512 micro-batches/step');
      assert.equal(await page.getAttribute('#f-training-dp', 'placeholder'), 'auto (2)');
      const story = await page.textContent('#peak-story');
      assert.match(story, /^Stage \d+: \d+ micro-batch(es)? in flight × [\d.]+ GiB of activations each; peak at .+; this GPU holds [\d.]+ B dense parameters\.$/);
      noProblems(problems);
      await context.close();
    });

    it('offers the search right after an import lands out of memory', async () => {
      const { page, context, problems } = await openPage(browser, url);
      await page.click('#open-import');
      await page.click('#import-kind-json');
      const config = { model: 'llama3-70b', training: { seq_len: 8192, micro_batch_size: 1, global_batch_size: 64, tp: 8 }, system: { preset: 'h100-sxm-80gb', num_gpus: 8 } };
      await page.fill('#import-json-text', JSON.stringify(config));
      await page.click('#import-run');
      await page.waitForSelector('#import-find-plan', { timeout: 30000 });
      await shots(page, artifacts, 'import-oom', { fullPage: false });
      await page.click('#import-find-plan');
      await page.waitForSelector('#view-search:not([hidden])');
      assert.equal(await page.inputValue('#search-gpus'), '8');
      noProblems(problems);
      await context.close();
    });
  });
}
