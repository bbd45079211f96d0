import { launchBrowser, openPage } from './harness.mjs';
const [url, prefix, w, h, scheme, inject] = process.argv.slice(2);
const browser = await launchBrowser();
const { page, problems } = await openPage(browser, url, { width: +w, height: +h, colorScheme: scheme });
if (inject) await page.evaluate(async () => {
  const { store } = await import('./store.js');
  const result = structuredClone(store.get().result);
  const b = { forward_s: 0.9, backward_s: 1.8, recompute_s: 0.3, optimizer_s: 0.05, tp_comm_exposed_s: 0.2, cp_comm_exposed_s: 0, ep_comm_exposed_s: 0, pp_comm_exposed_s: 0.04, dp_comm_exposed_s: 0.1, bubble_s: 0.35 };
  result.time = { iteration_s: 3.74, breakdown: b };
  result.throughput = { tokens_per_s: 2.24e6, tokens_per_s_per_gpu: 35000, model_tflops_per_gpu: 420, hardware_tflops_per_gpu: 455, mfu: 0.425, flop_convention: '6ND', seconds_per_trillion_tokens: 446000, gpu_hours_per_trillion_tokens: 7930 };
  result.timeline = { stages: [0,1,2,3].map((stage) => ({ stage, events: [...Array(8).keys()].flatMap((mb) => [{ kind: 'forward', micro_batch: mb, chunk: 0, start_s: (stage+mb)*0.1, end_s: (stage+mb)*0.1+0.09 }, { kind: 'backward', micro_batch: mb, chunk: 0, start_s: 1.2+(3-stage+mb)*0.2, end_s: 1.38+(3-stage+mb)*0.2 }]) })) };
  store.set({ result });
});
const total = await page.evaluate(() => document.documentElement.scrollHeight);
for (let y = 0, i = 0; y < total && i < 6; y += +h, i++) {
  await page.evaluate((y) => window.scrollTo(0, y), y);
  await page.waitForTimeout(100);
  await page.screenshot({ path: `/tmp/shots/${prefix}-${i}.png` });
}
console.log(problems, total);
await browser.close();
