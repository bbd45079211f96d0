// The training keys the form gained last (FP8 recipe and parameters,
// activation offload, the other fused kernels, MoE router options, CUDA
// graphs, dropout, NCCL NVLS): edited in the form, kept in the link, the
// core's errors on their own field; a Megatron-LM import that sets them is
// shown whole, names a mistyped flag, and selects the preset it describes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { act, launchBrowser, openPage } from './harness.mjs';

const PLAIN = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=4096&mbs=1&gbs=64';
const hashOf = (page) => page.evaluate(() => location.hash);
const errorOf = (page, id) => page.locator(`#${id}-error`);

export function trainingFormTests({ url, artifacts }) {
  let browser;
  before(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });

  describe('the training form\'s advanced keys', () => {
    it('edits them, keeps them in the link, and shows the core\'s errors on their field', async () => {
      const { page, context, problems } = await openPage(browser, `${url}${PLAIN}`);
      // FP8 settings appear with fp8.
      assert.equal(await page.isVisible('#f-training-fp8_recipe'), false, 'no FP8 recipe for bf16');
      await act(page, () => page.selectOption('#f-training-dtype', 'fp8'));
      assert.equal(await page.isVisible('#f-training-fp8_recipe'), true);
      await act(page, () => page.selectOption('#f-training-fp8_recipe', 'mxfp8'));
      await page.waitForFunction(() => !document.getElementById('f-training-fp8_recipe-error').hidden);
      assert.match(await errorOf(page, 'f-training-fp8_recipe').textContent(), /mxfp8/i, 'mxfp8 on an H100: the error is on the recipe');
      await act(page, () => page.selectOption('#f-training-fp8_recipe', 'tensorwise'));
      assert.equal(await errorOf(page, 'f-training-fp8_recipe').isHidden(), true);
      // CUDA graphs, dropout and NVLS in the Advanced group.
      await page.click('details.subgroup:has(#f-training-cuda_graph-impl) > summary');
      assert.equal(await page.isVisible('#f-training-cuda_graph-modules-attn'), false, 'no modules without graphs');
      await act(page, () => page.selectOption('#f-training-cuda_graph-impl', 'local'));
      await act(page, () => page.check('#f-training-cuda_graph-modules-attn'));
      await act(page, () => page.fill('#f-training-hidden_dropout', '0.1'));
      await act(page, () => page.uncheck('#f-training-nccl_nvls'));
      assert.match(await hashOf(page), /&dt=fp8&f8r=tensorwise&cgi=local&cgm=attn&hdo=0\.1&nvl=0$/);
      // A rule between two keys lands on the key the core names.
      await act(page, () => page.fill('#f-training-activation_offload_layers', '2'));
      await page.waitForFunction(() => !document.getElementById('f-training-activation_offload_layers-error').hidden);
      assert.match(await errorOf(page, 'f-training-activation_offload_layers').textContent(), /CUDA graphs/);
      // Switching graphs off drops the modules and clears the error.
      await act(page, () => page.selectOption('#f-training-cuda_graph-impl', 'none'));
      assert.equal(await errorOf(page, 'f-training-activation_offload_layers').isHidden(), true);
      assert.doesNotMatch(await hashOf(page), /cgm=|cgi=/);
      // MoE router options.
      await page.click('details.subgroup:has(#f-training-moe_router_fp32) > summary');
      await act(page, () => page.check('#f-training-moe_router_fp32'));
      await act(page, () => page.fill('#f-training-moe_aux_loss_coeff', '0.01'));
      assert.match(await hashOf(page), /&mal=0\.01&mrf=1/);
      // The link opens the same form.
      const again = await openPage(browser, `${url}${await hashOf(page)}`);
      assert.equal(await again.page.inputValue('#f-training-fp8_recipe'), 'tensorwise');
      assert.equal(await again.page.inputValue('#f-training-hidden_dropout'), '0.1');
      assert.equal(await again.page.inputValue('#f-training-activation_offload_layers'), '2');
      assert.equal(await again.page.isChecked('#f-training-nccl_nvls'), false);
      assert.equal(await again.page.isChecked('#f-training-moe_router_fp32'), true);
      assert.deepEqual(again.problems, []);
      await again.context.close();
      await page.locator('fieldset[data-section="training"]').screenshot({ path: path.join(artifacts, 'training-form-advanced.png') });
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });

    it('imports Megatron-LM flags that set them, naming a mistyped flag, and selects the preset', async () => {
      const { page, context, problems } = await openPage(browser,
        `${url}${PLAIN}&dt=fp8&f8r=tensorwise&f8p=1&fbd=0&fro=0&cgi=local&cgm=attn,mlp&hdo=0.1&ado=0.1`);
      const wanted = await hashOf(page);
      await page.click('#open-export');
      await page.waitForFunction(() => /pretrain_gpt\.py/.test(document.getElementById('export-megatron-text').value));
      const flags = await page.inputValue('#export-megatron-text');
      assert.match(flags, /--fp8-recipe tensorwise/);
      await page.click('#export-close');
      // Back to the default view, then the flags plus a typo.
      await act(page, () => page.evaluate(() => { location.hash = ''; }));
      await page.click('#open-import');
      await page.click('#import-kind-megatron');
      await page.fill('#import-megatron-text', flags.replace('--attention-backend', '--use-flash-atn \\\n    --attention-backend'));
      await page.selectOption('#import-megatron-system', 'h100-sxm-80gb');
      await act(page, () => page.click('#import-run'));
      const outcome = await page.textContent('#import-outcome');
      assert.match(outcome, /--use-flash-atn is not a Megatron-LM flag trainsim knows: ignored \(did you mean --use-flash-attn\?\)/);
      assert.match(outcome, /equals the preset "Llama 3 8B"/);
      assert.doesNotMatch(outcome, /Not shown in the page/, 'every imported key has a field');
      await page.click('#import-close');
      assert.equal(await page.inputValue('#f-model-preset'), 'llama3-8b');
      assert.equal(await hashOf(page), wanted, 'the same plan as the link the flags came from');
      assert.deepEqual(problems, [], 'the page reported errors');
      await context.close();
    });
  });
}
