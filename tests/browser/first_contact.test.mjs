// Issue 17 in headless Chromium: first contact and "never wrong on screen"
// (stale panels marked while the configuration is invalid, Export warning
// for a plan that does not fit).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { act, launchBrowser, openPage } from './harness.mjs';

export function firstContactTests({ url, artifacts }) {
  let browser;
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });
  const noProblems = (problems) => assert.deepEqual(problems, [], 'the page reported errors');
  const shot = (page, name) => page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });

  describe('never wrong on screen', () => {
    it('marks every result panel "last valid result" while the configuration is invalid', async () => {
      const { page, context, problems } = await openPage(browser, url);
      const panels = ['#memory', '#time', '#throughput', '#timeline'];
      const visible = [];
      for (const id of panels) {
        if (await page.isVisible(id)) visible.push(id);
        assert.equal(await page.getAttribute(id, 'data-stale'), 'false', id);
      }
      assert.ok(visible.includes('#memory'), 'the memory panel is shown');
      assert.equal(await page.isVisible('#facts-stale'), false);
      await act(page, () => page.fill('#f-training-tp', '16'));
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'invalid');
      for (const id of visible) {
        assert.equal(await page.getAttribute(id, 'data-stale'), 'true', `${id} marked stale`);
        assert.equal(await page.isVisible(`${id} > .stale-badge`), true, `${id} says so`);
        assert.match(await page.textContent(`${id} > .stale-badge`), /^Last valid result/);
        const opacity = await page.$eval(`${id} > :not(h2):not(.stale-badge):not([hidden])`, (el) => Number(getComputedStyle(el).opacity));
        assert.ok(opacity < 0.5, `${id} dimmed (${opacity})`);
      }
      // The headline numbers: labelled and dimmed; the verdict itself stays readable.
      assert.equal(await page.isVisible('#facts-stale'), true);
      const shown = (selector) => page.$eval(selector, (el) => {  // opacity through every ancestor
        let opacity = 1;
        for (let node = el; node; node = node.parentElement) opacity *= Number(getComputedStyle(node).opacity);
        return opacity;
      });
      assert.ok(await shown('#facts') < 0.5, 'facts dimmed');
      for (const id of ['#verdict', '#problems', '#f-training-tp']) assert.equal(await shown(id), 1, `${id} at full strength`);
      await shot(page, 'invalid-stale');
      await act(page, () => page.fill('#f-training-tp', '8'));
      for (const id of visible) {
        assert.equal(await page.getAttribute(id, 'data-stale'), 'false', `${id} restored`);
        assert.equal(await page.isVisible(`${id} > .stale-badge`), false, `${id} label gone`);
      }
      assert.equal(await page.isVisible('#facts-stale'), false);
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

    it('warns in Export when the plan does not fit or is invalid', async () => {
      const { page, context, problems } = await openPage(browser, `${url}#v=1&m=llama3-70b&s=h100-sxm-80gb&n=8&seq=8192&mbs=1&gbs=64&tp=8`);
      assert.equal(await page.getAttribute('#verdict', 'data-verdict'), 'oom');
      await page.click('#open-export');
      await page.waitForSelector('#export-warning:not([hidden])');
      assert.match(await page.textContent('#export-warning'), /does not fit.*run out of memory/);
      await page.screenshot({ path: path.join(artifacts, 'export-oom-warning.png') });
      await page.click('#export-close');
      await act(page, () => page.fill('#f-training-tp', '3'));
      await page.click('#open-export');
      await page.waitForSelector('#export-warning:not([hidden])');
      assert.match(await page.textContent('#export-warning'), /configuration has problems/);
      await page.click('#export-close');
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
  });
}
