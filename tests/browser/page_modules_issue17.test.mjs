// Node-side tests of the page modules issue 17 added: one unit per view,
// the verdict (core's memory.verdict, or `fits`), the plan summary, applying
// a suggestion, pin names in links, the Hugging Face fetch and the readers of
// the per-op table and the memory timeline.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { bytesUnit, formatBytesIn, formatSecondsIn, formatStep, secondsUnit } from '../../web/lib/format.js';
import { planSummary, verdictOf } from '../../web/state/verdict.js';
import { applySet, unknownKeys } from '../../web/state/suggest.js';
import { decode, encode } from '../../web/state/url.js';
import { defaultSpec, fromConfig, toConfig } from '../../web/state/config.js';
import { loadCatalog } from '../../web/engine/catalog.js';
import { FIELDS, installSchema } from '../../web/state/fields.js';
import { configUrl, fetchHubConfig, modelIdProblem } from '../../web/lib/hf_hub.js';
import { readRows } from '../../web/views/ops_table.js';
import { readMemoryTimeline } from '../../web/views/memory_timeline.js';
import { deltaText } from '../../web/views/compare.js';
import { formatTerm, partLabel, substitute } from '../../web/views/explain.js';

const GiB = 1024 ** 3;

export async function issue17ModuleTests(args) {
  const { default: createTrainsim } = await import(pathToFileURL(path.resolve(args.module)).href);
  const module = await createTrainsim();
  const catalog = await loadCatalog(async (op, input) => JSON.parse(module.call(op, input)), module.version());
  installSchema(catalog.schema);

  describe('lib/format.js: one unit per view', () => {
    it('picks the unit of the largest value and writes every value in it', () => {
      assert.equal(bytesUnit(80 * GiB).name, 'GiB');
      assert.equal(bytesUnit(300 * 1024 ** 2).name, 'MiB');
      assert.equal(bytesUnit(5 * 1024 ** 4).name, 'TiB');
      assert.equal(formatBytesIn(256 * 1024 ** 2, bytesUnit(80 * GiB)), '0.250 GiB');
      assert.equal(formatBytesIn(0, bytesUnit(80 * GiB)), '0 GiB');
      assert.equal(secondsUnit(141).name, 's');
      assert.equal(formatSecondsIn(0.00004, secondsUnit(2)), '< 0.001 s', 'never "0.000"');
      assert.equal(formatStep(141.2), '141 s');
      assert.equal(formatStep(2.345), '2.35 s');
    });
  });

  describe('state/verdict.js', () => {
    const result = { fits: true, reasons: [], memory: { capacity_bytes: 80 * GiB, peak_bytes: 60 * GiB, peak_stage: 1, stages: [] } };
    it('reads the core\'s verdict, and falls back to `fits` against the capacity', () => {
      assert.deepEqual(verdictOf(result), { status: 'fits', usable: 80 * GiB, margin: 20 * GiB, device: 60 * GiB, stage: 1, headroom: 0, reasons: [], core: false });
      const tight = { ...result, memory: { ...result.memory, verdict: { status: 'tight', margin_bytes: 2 * GiB, usable_bytes: 78 * GiB, headroom_fraction: 0.05, device_bytes: 76 * GiB, stage: 0, reasons: ['r'] } } };
      assert.deepEqual(verdictOf(tight), { status: 'tight', usable: 78 * GiB, margin: 2 * GiB, device: 76 * GiB, stage: 0, headroom: 0.05, reasons: ['r'], core: true });
      assert.equal(verdictOf({ ...result, fits: false }).status, 'oom');
    });

    it('sums the plan up in one line, dp auto and micro-batches derived as the core does', () => {
      const spec = defaultSpec(catalog);
      assert.equal(planSummary(spec, catalog).text, '64 × H100 SXM 80GB · tp8 pp4 dp auto (2) · 512 micro-batches/step');
      spec.training = { ...spec.training, dp: 2, cp: 1, ep: 1, zero_stage: 3 };
      assert.equal(planSummary(spec, catalog).text, '64 × H100 SXM 80GB · tp8 pp4 dp2 ZeRO-3 · 512 micro-batches/step');
    });
  });

  describe('views/explain.js: the core\'s explanation, formatted', () => {
    it('names the part, writes each term in its unit and puts the values into the formula', () => {
      assert.equal(partLabel('/memory/stages/2/optimizer_bytes'), 'Optimizer states, stage 2');
      assert.equal(partLabel('/time/breakdown/bubble_s'), 'Pipeline bubble (critical stage)');
      assert.equal(formatTerm(1571389440, 'count'), '1.57e9', 'not "1.57 B" beside bytes');
      assert.equal(formatTerm(16, 'count'), '16');
      assert.equal(formatTerm(2.5, 'count'), '2.5');
      assert.equal(formatTerm(12, 'bytes/param'), '12 bytes/param');
      assert.equal(formatTerm(3 * GiB, 'bytes'), '3 GiB');
      assert.equal(formatTerm(146.5712, 's'), '146.57 s');
      assert.equal(formatTerm(0.3487174, 's'), '348.72 ms');
      const terms = [{ symbol: 'P_dense', value: 1571389440, unit: 'count' }, { symbol: 'b_adam', value: 12, unit: 'bytes/param' },
        { symbol: 'g_dense', value: 2, unit: 'count' }, { symbol: 'f_off', value: 0.25, unit: 'fraction' }];
      assert.equal(substitute('P_dense * b_adam / g_dense * (1 - f_off)', terms), '1.57e9 × 12 bytes/param / 2 × (1 - 0.25)');
      assert.equal(substitute('m * (H_f + H_b)', [{ symbol: 'm', value: 16, unit: 'count' }]), '16 × (H_f + H_b)', 'unknown symbols stay');
    });
  });

  describe('state/suggest.js', () => {
    it('applies a suggestion\'s keys, a recompute object as a whole, and names keys the page cannot set', () => {
      const spec = defaultSpec(catalog);
      spec.training.dp = 2;
      spec.training['recompute.granularity'] = 'full';
      spec.training['recompute.method'] = 'uniform';
      const { spec: next, missing } = applySet(spec, { 'training.tp': '4', 'training.recompute': '{"granularity": "selective"}' });
      assert.deepEqual(missing, []);
      assert.equal(next.training.tp, 4);
      assert.equal(next.training.dp, undefined, 'dp follows the GPU count again');
      assert.equal(next.training['recompute.granularity'], 'selective');
      assert.equal(next.training['recompute.method'], undefined);
      assert.equal(spec.training.tp, 8, 'the spec itself is untouched');
      assert.deepEqual(unknownKeys({ 'training.nccl_nvls': 'false', 'training.no_such_key': '1', 'training.pp': '8' }), ['training.no_such_key']);
      const offload = applySet(spec, { 'training.optimizer_offload_fraction': '0.5', 'training.expandable_segments': 'true' });
      assert.deepEqual(offload.missing, [], 'the form has optimizer offload and expandable segments');
      assert.equal(offload.spec.training.optimizer_offload_fraction, 0.5);
      assert.equal(offload.spec.training.expandable_segments, true);
    });
  });

  describe('the training keys of the form: every key of the core\'s schema', () => {
    const estimate = (spec) => {
      const envelope = JSON.parse(module.call('estimate', JSON.stringify(toConfig(spec))));
      assert.ok(envelope.ok, JSON.stringify(envelope.errors ?? envelope).slice(0, 400));
      return envelope.result;
    };

    it('has a field for every training key but train_tokens (the "Tokens to train" box, tok=)', () => {
      const schemaKeys = catalog.schema.config.training.filter((f) => f.type !== 'object').map((f) => f.key);
      const formKeys = new Set(FIELDS.training.map((f) => f.key));
      assert.deepEqual(schemaKeys.filter((key) => !formKeys.has(key)), ['train_tokens']);
    });

    it('round-trips the new keys through the link and the document, and the core reads them', () => {
      const plain = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=4096&mbs=1&gbs=64';
      const dense = `${plain}&dt=fp8&f8r=tensorwise&f8p=1&fbd=0&fro=0&fsm=0&cgi=local&cgm=attn,mlp&hdo=0.1&ado=0.1&nvl=0`;
      const moe = '#v=1&m=mixtral-8x7b&s=h100-sxm-80gb&n=8&seq=4096&mbs=1&gbs=64&ep=8&mlb=seq_aux_loss&mal=0.001&meb=1&mrf=1&mrx=1&mpx=1';
      for (const hash of [dense, moe]) {
        const { state, ignored } = decode(hash, catalog);
        assert.deepEqual(ignored, [], hash);
        assert.equal(encode(state, catalog), hash);
        const back = fromConfig(JSON.parse(JSON.stringify(toConfig(state))), catalog);
        assert.deepEqual(back.ignored, [], hash);
        assert.equal(encode(back.spec, catalog), hash);
        estimate(state);
      }
      const t = toConfig(decode(dense, catalog).state).training;
      assert.deepEqual(t.cuda_graph, { impl: 'local', modules: ['attn', 'mlp'] });
      assert.deepEqual([t.fp8_recipe, t.fp8_param_gather, t.nccl_nvls, t.hidden_dropout], ['tensorwise', true, false, 0.1]);
      // The keys reach the estimate: dropout keeps its masks, offloaded layers leave the GPU.
      const activations = (hash) => estimate(decode(hash, catalog).state).memory.stages[0].activations_bytes;
      assert.ok(activations(`${plain}&hdo=0.1&ado=0.1`) > activations(plain), 'dropout masks are saved');
      assert.ok(activations(`${plain}&aol=8`) < activations(plain), 'offloaded layers\' activations leave the GPU');
    });

    it('reads links from before the new keys exactly as before', () => {
      const old = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=4096&mbs=1&gbs=64&dt=fp8&tp=2&sp=1&z=0&fa=0&mpc=1&mcf=1.5&tok=15T';
      const { state, ignored } = decode(old, catalog);
      assert.deepEqual(ignored, []);
      assert.equal(encode(state, catalog), old);
      assert.deepEqual(toConfig(state), {
        model: { preset: 'llama3-8b' },
        training: { seq_len: 4096, micro_batch_size: 1, global_batch_size: 64, dtype: 'fp8', tp: 2, sequence_parallel: true, zero_stage: 0,
          flash_attention: false, moe_pad_to_capacity: true, moe_capacity_factor: 1.5, train_tokens: 15e12 },
        system: { preset: 'h100-sxm-80gb', num_gpus: 8 },
      });
    });

    it('takes train_tokens and an empty cuda_graph.modules from an imported document', () => {
      const { spec, ignored, tokens } = fromConfig({
        model: 'llama3-8b', system: 'h100-sxm-80gb',
        training: { seq_len: 4096, micro_batch_size: 1, global_batch_size: 64, train_tokens: 2e12, cuda_graph: { impl: 'transformer_engine', modules: [] } },
      }, catalog);
      assert.deepEqual(ignored, []);
      assert.equal(tokens, 2e12);
      assert.equal(spec.training['cuda_graph.impl'], 'transformer_engine');
      assert.equal(spec.training['cuda_graph.modules'], undefined, 'empty = the default (each whole layer)');
      assert.deepEqual(fromConfig({ training: { train_tokens: -1 } }, catalog).ignored, ['/training/train_tokens: unexpected value -1']);
      assert.equal(toConfig(defaultSpec(catalog)).training.train_tokens, undefined, 'the default budget stays out of the document');
    });
  });

  describe('state/url.js: named pins', () => {
    it('keeps a pin\'s name in the link, escaped, and reads it back', () => {
      const pin = { ...defaultSpec(catalog), name: 'a;b:c & "d"' };
      const hash = encode(defaultSpec(catalog), catalog, { pins: [pin] });
      const back = decode(hash, catalog);
      assert.deepEqual(back.ignored, []);
      assert.equal(back.pins[0].name, 'a;b:c & "d"');
      assert.equal(decode(hash.replace('name:', 'nam:'), catalog).ignored.length, 1);
    });
  });

  describe('lib/hf_hub.js', () => {
    it('checks the model id and builds the Hub URL', () => {
      assert.equal(modelIdProblem('Qwen/Qwen3-32B'), '');
      assert.notEqual(modelIdProblem('Qwen3-32B'), '');
      assert.notEqual(modelIdProblem('a/b/c'), '');
      assert.notEqual(modelIdProblem('../etc/passwd'), '');
      assert.equal(configUrl('Qwen/Qwen3-32B'), 'https://huggingface.co/Qwen/Qwen3-32B/resolve/main/config.json');
    });

    it('says what to do when offline, gated, missing or too large', async () => {
      const answer = (status, body = '{}') => async () => ({ status, ok: status === 200, text: async () => body });
      assert.match((await fetchHubConfig('a/b', { fetchImpl: async () => { throw new TypeError('Failed to fetch'); } })).message, /Could not reach huggingface\.co.*paste it below/);
      assert.match((await fetchHubConfig('a/b', { fetchImpl: answer(401) })).message, /gated or private/);
      assert.match((await fetchHubConfig('a/b', { fetchImpl: answer(404) })).message, /no config\.json for a\/b/);
      assert.match((await fetchHubConfig('a/b', { fetchImpl: answer(500) })).message, /answered 500/);
      assert.match((await fetchHubConfig('a/b', { fetchImpl: answer(200, 'x'.repeat(2 << 20)) })).message, /larger than 1 MiB/);
      assert.deepEqual(await fetchHubConfig('a/b', { fetchImpl: answer(200, '{"x": 1}') }), { ok: true, text: '{"x": 1}' });
    });
  });

  describe('readers of newer result parts', () => {
    it('reads tables as objects or columns + rows, and the memory timeline', () => {
      assert.deepEqual(readRows([{ name: 'a', time_s: 1 }]), [{ name: 'a', time_s: 1 }]);
      assert.deepEqual(readRows({ columns: ['op', 'saved_bytes'], rows: [['x', 2]] }), [{ op: 'x', saved_bytes: 2 }]);
      assert.deepEqual(readRows(undefined), []);
      const timeline = readMemoryTimeline({ columns: ['event', 'allocated_bytes', 'reserved_bytes', 'pass'], stages: [{ stage: 0, points: [[3, 10, 12, 'F mb 0']] }, { stage: 1, points: [] }] });
      assert.deepEqual(timeline, [{ stage: 0, points: [{ event: 3, allocated: 10, reserved: 12, pass: 'F mb 0' }] }]);
      assert.equal(deltaText(110, 100), '+10.0 % vs #1');
      assert.equal(deltaText(90, 100), '−10.0 % vs #1');
      assert.equal(deltaText(100, 100), 'same as #1');
    });
  });
}
