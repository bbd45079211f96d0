// Node-side tests of the page's pure modules (state/, engine/ paging,
// lib/format.js): no browser needed. The catalog and the schema come from
// the WASM module (--module), through the page's own engine/catalog.js.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { decode, encode } from '../../web/state/url.js';
import { defaultSpec, fromConfig, toConfig } from '../../web/state/config.js';
import { compactCount, formatBytes, formatPercent, formatSeconds, formatTokens, parseCount } from '../../web/lib/format.js';
import { newestWins } from '../../web/engine/client.js';
import { betterPlan, pageBound, pagedSearch, splitPages } from '../../web/engine/search_pages.js';
import { decodeSearch, encodeSearch } from '../../web/state/search_url.js';
import { loadCatalog } from '../../web/engine/catalog.js';
import { FIELDS, fieldByKey, fieldByUrl, figureLabel, installSchema } from '../../web/state/fields.js';
import { LAYOUT } from '../../web/state/layout.js';
import { defaultHeadroomPercent, defaultSearchInputs, parseChoices, parseGpus, searchDegrees, searchDocument } from '../../web/state/search_spec.js';
import { randomHashes } from './random_hashes.mjs';

export async function moduleTests(args) {
  const { default: createTrainsim } = await import(pathToFileURL(path.resolve(args.module)).href);
  const module = await createTrainsim();
  const call = async (op, input) => JSON.parse(module.call(op, input));
  const catalog = await loadCatalog(call, module.version());
  const unknown = installSchema(catalog.schema);
  const hasModel = (id) => catalog.models.some((p) => p.id === id);

  describe('state/fields.js: the layout joined with the core\'s schema', () => {
    it('finds every field of the layout in the schema', () => {
      assert.deepEqual(unknown, []);
      for (const [section, layout] of Object.entries(LAYOUT)) {
        assert.deepEqual(FIELDS[section].map((f) => f.key), layout.map((hint) => hint.key), section);
      }
      assert.equal(new Set([...Object.values(FIELDS)].flat().map((f) => f.url)).size, [...Object.values(FIELDS)].flat().length, 'URL names are unique');
    });

    it('takes types, values and defaults from the schema', () => {
      const described = (section, key) => catalog.schema.config[section].find((f) => f.key === key);
      assert.equal(fieldByKey('training', 'tp').type, 'int');
      assert.equal(fieldByKey('training', 'tp').def, described('training', 'tp').default);
      assert.deepEqual(fieldByKey('training', 'dtype').values, catalog.schema.enums[described('training', 'dtype').enum]);
      assert.deepEqual(fieldByKey('training', 'zero_stage').values, [0, 1, 2, 3], 'a small integer range is a choice');
      assert.equal(fieldByKey('training', 'recompute.modules').type, 'list');
      assert.equal(fieldByKey('model', 'moe').type, 'section');
      assert.equal(fieldByKey('system', 'gpu.peak_tflops.bf16').type, 'number', 'a map entry');
      assert.equal(fieldByUrl('z').key, 'zero_stage');
      assert.equal(fieldByUrl('m.hidden_size').key, 'hidden_size');
      assert.equal(figureLabel('peak_flops'), catalog.schema.whatif_figures.find((f) => f.id === 'peak_flops').label);
      assert.deepEqual(installSchema({ config: {} }).length, Object.values(LAYOUT).flat().length, 'an empty schema leaves the form empty');
      assert.deepEqual(installSchema(catalog.schema), []);
    });
  });

  describe('state/url.js and state/config.js', () => {
    it('encodes the default view compactly', () => {
      const spec = defaultSpec(catalog);
      const model = hasModel('llama3-70b') ? 'llama3-70b' : catalog.models[0].id;
      assert.equal(encode(spec, catalog), `#v=1&m=${model}&s=h100-sxm-80gb&n=64&seq=8192&mbs=1&gbs=1024&tp=8&sp=1&pp=4`);
      assert.deepEqual(toConfig(spec), {
        model: { preset: model },
        training: { seq_len: 8192, micro_batch_size: 1, global_batch_size: 1024, tp: 8, sequence_parallel: true, pp: 4 },
        system: { preset: 'h100-sxm-80gb', num_gpus: 64 },
      });
    });

    it('round-trips overrides, sections, lists and token counts', () => {
      const hash = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=2&nmb=8&dt=fp8&tp=2&sp=1&pp=2&vpp=2&z=3&rc=selective'
        + '&rcx=core_attn,mlp&fa=0&te=2.11&m.num_layers=24&m.moe=1&m.moe.num_experts=8&s.gpu.hbm_capacity_gib=96.5&tok=15T';
      const { state, ignored } = decode(hash, catalog);
      assert.deepEqual(ignored, []);
      assert.equal(encode(state, catalog), hash);
      const config = toConfig(state);
      assert.deepEqual(config.model, { preset: 'llama3-8b', num_layers: 24, moe: { num_experts: 8 } });
      assert.deepEqual(config.training.recompute, { granularity: 'selective', modules: ['core_attn', 'mlp'] });
      assert.deepEqual(config.system, { preset: 'h100-sxm-80gb', num_gpus: 16, gpu: { hbm_capacity_gib: 96.5 } });
      assert.equal(state.tokens, 15e12);
      const back = fromConfig(JSON.parse(JSON.stringify(config)), catalog);
      assert.deepEqual(back.ignored, []);
      back.spec.tokens = state.tokens;
      assert.equal(encode(back.spec, catalog), hash);
    });

    it('reads a preset alias as its preset, in links and imported configs, and lists the preset once', () => {
      const aliased = catalog.models.find((p) => p.aliases.length > 0);
      assert.ok(aliased, 'some model preset has an alias');
      const alias = aliased.aliases[0];
      assert.equal(hasModel(alias), false, 'the alias is no preset of its own');
      const { state, ignored } = decode(`#v=1&m=${alias}&s=h100-sxm-80gb&n=576&seq=8192&mbs=1&gbs=1024&tp=8&sp=1&pp=9`, catalog);
      assert.deepEqual(ignored, []);
      assert.equal(state.model.preset, aliased.id);
      assert.match(encode(state, catalog), new RegExp(`&m=${aliased.id.replace('.', '\\.')}&`), 'the link is rewritten to the id');
      const fromString = fromConfig({ model: alias, system: { preset: 'h100-sxm-80gb', num_gpus: 8 }, training: { global_batch_size: 8, seq_len: 4096 } }, catalog);
      assert.deepEqual(fromString.ignored, []);
      assert.equal(fromString.spec.model.preset, aliased.id);
      const fromObject = fromConfig({ model: { preset: alias }, system: { preset: 'h100-sxm-80gb', num_gpus: 8 }, training: { global_batch_size: 8, seq_len: 4096 } }, catalog);
      assert.equal(fromObject.spec.model.preset, aliased.id);
      assert.match(decode('#v=1&m=llama3-406b&s=h100-sxm-80gb&n=8', catalog).ignored.join(' '), /unknown model preset/);
    });

    it('round-trips optimizer CPU offload and expandable segments, and the core reads them', () => {
      const plain = '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=4096&mbs=1&gbs=64';
      const hash = `${plain}&oof=0.5&ood=1&es=1`;
      const { state, ignored } = decode(hash, catalog);
      assert.deepEqual(ignored, []);
      assert.equal(encode(state, catalog), hash);
      const config = toConfig(state);
      assert.equal(config.training.optimizer_offload_fraction, 0.5);
      assert.equal(config.training.overlap_cpu_optimizer_d2h_h2d, true);
      assert.equal(config.training.expandable_segments, true);
      const back = fromConfig(JSON.parse(JSON.stringify(config)), catalog);
      assert.deepEqual(back.ignored, []);
      assert.equal(encode(back.spec, catalog), hash);
      assert.equal(encode(decode(`${plain}&oof=0&ood=0&es=0`, catalog).state, catalog), plain, 'the core\'s defaults leave the link');
      // The document the page sends is the one the core estimates: half the
      // optimizer's states leave the GPU.
      const estimate = (spec) => {
        const envelope = JSON.parse(module.call('estimate', JSON.stringify(toConfig(spec))));
        assert.ok(envelope.ok, JSON.stringify(envelope.errors ?? envelope).slice(0, 400));
        return envelope.result.memory.stages[0];
      };
      const offloaded = estimate(state);
      const onGpu = estimate(decode(plain, catalog).state);
      assert.ok(onGpu.optimizer_bytes > 0);
      assert.ok(Math.abs(offloaded.optimizer_bytes - 0.5 * onGpu.optimizer_bytes) <= 0.01 * onGpu.optimizer_bytes,
        `${offloaded.optimizer_bytes} vs half of ${onGpu.optimizer_bytes}`);
    });

    it('drops overrides equal to the preset, and removes preset sections with 0', () => {
      const { state } = decode('#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8&m.num_layers=32&m.moe=0', catalog);
      assert.equal(encode(state, catalog), '#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8');
      if (hasModel('mixtral-8x7b')) {
        const moe = decode('#v=1&m=mixtral-8x7b&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8&m.moe=0&m.moe.top_k=1', catalog).state;
        assert.deepEqual(toConfig(moe).model, { preset: 'mixtral-8x7b', moe: null });
      }
    });

    it('names what it ignores and keeps the rest', () => {
      const { state, ignored } = decode('#v=2&m=nope&tp=abc&tp=4&zz=1&%E0%A4%A=1&seq=4096&pp&gbs=1.5&rcx=core_attn,bogus', catalog);
      assert.deepEqual(ignored, [
        'v=2 (this page reads version 1)', 'm=nope (unknown model preset)', 'tp=abc (expected a number, got "abc")',
        'tp=4 (repeated)', 'zz=1 (unknown field)', '%E0%A4%A=1 (malformed escape)', 'pp (no value)',
        'gbs=1.5 (expected an integer, got 1.5)',
        'rcx=core_attn,bogus (expected items of core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, shared_experts, attn, attn_norm, '
          + 'attn_proj, mlp_block, mlp_norm, mlp_linear, got "bogus")',
      ]);
      assert.equal(state.training.seq_len, 4096);
      assert.equal(state.training.tp, undefined);
      assert.equal(state.training.global_batch_size, 1024, 'a required field falls back to the default view');
    });

    it('gives the default view for an empty or unreadable link', () => {
      for (const hash of ['', '#', '#v=1', '#garbage', '#&&&']) {
        assert.equal(encode(decode(hash, catalog).state, catalog), encode(defaultSpec(catalog), catalog), hash);
      }
    });

    it('1,000 random links decode to a state that encodes to a fixed point', () => {
      for (const hash of randomHashes(1000, 7)) {
        const { state, ignored } = decode(hash, catalog);
        assert.ok(Array.isArray(ignored));
        const canonical = encode(state, catalog);
        const again = decode(canonical, catalog);
        assert.deepEqual(again.ignored, [], `${hash} -> ${canonical}`);
        assert.equal(encode(again.state, catalog), canonical, hash);
        assert.doesNotThrow(() => JSON.stringify(toConfig(state)));
      }
    });

    it('imports config documents, naming the parts it cannot use', () => {
      const { spec, ignored } = fromConfig({
        schema_version: 1, name: 'mine', extra: 1,
        model: { num_layers: 4, hidden_size: 256, num_attention_heads: 4, ffn_hidden_size: 1024, vocab_size: 1000, name: 'tiny', bogus: 2 },
        training: { seq_len: 128, micro_batch_size: 1, num_micro_batches: 4, tp: 'two', recompute: { granularity: 'full', method: 'block', num_layers: 2 } },
        system: 'no-such-system',
      }, catalog);
      assert.deepEqual(ignored, ['/extra', '/model/bogus', '/training/tp: unexpected value "two"', '/system: unknown preset "no-such-system"']);
      assert.equal(spec.model.preset, 'custom');
      assert.deepEqual(toConfig(spec).model, { num_layers: 4, hidden_size: 256, num_attention_heads: 4, ffn_hidden_size: 1024, vocab_size: 1000 });
      assert.deepEqual(toConfig(spec).training.recompute, { granularity: 'full', method: 'block', num_layers: 2 });
      assert.match(encode(spec, catalog), /^#v=1&m=custom&/);
      assert.deepEqual(fromConfig([1, 2], catalog).ignored, ['the file is not a JSON object']);
    });
  });

  describe('state/url.js: tab and pinned configs', () => {
    it('keeps the open tab and up to four pinned configs in the link, and reads links without them as before', () => {
      const a = decode('#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64&tp=2&sp=1&pp=2&te=2.11&m.num_layers=24', catalog).state;
      const b = defaultSpec(catalog);
      const hash = encode(b, catalog, { view: 'compare', pins: [a, b] });
      assert.ok(hash.startsWith(`${encode(b, catalog)}&view=compare&c1=m:llama3-8b;s:h100-sxm-80gb;n:16;seq:4096;`), hash);
      const back = decode(hash, catalog);
      assert.deepEqual(back.ignored, []);
      assert.equal(back.view, 'compare');
      assert.deepEqual(back.pins.map((pin) => encode(pin, catalog)), [encode(a, catalog), encode(b, catalog)]);
      assert.equal(encode(back.state, catalog, { view: back.view, pins: back.pins }), hash);
      // A pinned value with ':' ';' or '%' survives.
      const odd = decode('#v=1&m=custom&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8&m.num_layers=4', catalog).state;
      const oddHash = encode(b, catalog, { pins: [odd] });
      assert.deepEqual(decode(oddHash, catalog).pins.map((pin) => encode(pin, catalog)), [encode(odd, catalog)]);
      const old = decode('#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=2048&mbs=1&gbs=8', catalog);
      assert.deepEqual([old.view, old.pins, old.ignored], ['calc', [], []]);
      assert.deepEqual(decode('#v=1&seq=2048&view=nope&c0=tp:2&c5=tp:2&c2=tp:x&c3=junk', catalog).ignored, [
        'view=nope (expected one of calc, search, whatif, compare)', 'c0=tp:2 (unknown field)', 'c5=tp:2 (at most 4 pinned configs)',
        'c2: tp=x (expected a number, got "x")', 'c2=tp:x (no config fields)', 'c3: junk (no value)', 'c3=junk (no config fields)',
      ]);
    });
  });

  describe('state/search_url.js: the Search tab\'s inputs in the link (q=)', () => {
    const spec = () => decode('#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64', catalog).state;
    it('writes the inputs that differ from the defaults, with view=search only, and reads them back', () => {
      const inputs = {
        ...defaultSearchInputs(), gpus: '512-4096/512', gbs: '4096', tp: '1,2,4,8', micro_batch_size: '1,2', recompute: ['selective', 'full'],
        zero: [1, 3], sp: 'both', uneven: true, headroom: '7.5', top_k: '20', objective: 'tokens_per_s_per_gpu',
      };
      const hash = encode(spec(), catalog, { view: 'search', search: inputs });
      assert.ok(hash.endsWith('&view=search&q=n:512-4096/512;gbs:4096;tp:1,2,4,8;mbs:1,2;rc:selective,full;z:1,3;sp:both;u:1;h:7.5;k:20;o:tokens_per_s_per_gpu'), hash);
      const back = decode(hash, catalog);
      assert.deepEqual(back.ignored, []);
      assert.equal(back.view, 'search');
      assert.deepEqual(back.search, inputs);
      assert.equal(encode(back.state, catalog, { view: back.view, search: back.search }), hash);
      // Every default: q is empty, and still a search to run; no q on other tabs.
      assert.ok(encode(spec(), catalog, { view: 'search', search: defaultSearchInputs() }).endsWith('&view=search&q='));
      assert.deepEqual(decode(`${encode(spec(), catalog)}&q=`, catalog).search, defaultSearchInputs());
      assert.equal(decode(`${encode(spec(), catalog)}&q=`, catalog).view, 'search', 'q opens the Search tab');
      assert.doesNotMatch(encode(spec(), catalog, { view: 'calc', search: inputs }), /&q=/);
      assert.equal(decode(encode(spec(), catalog), catalog).search, null, 'links without q read as before');
      // A value with ';', ':' or '%' survives (it is escaped twice, as in a pinned config).
      const odd = decode(encode(spec(), catalog, { view: 'search', search: { ...defaultSearchInputs(), gpus: '8;k:9%' } }), catalog);
      assert.deepEqual([odd.search.top_k, odd.ignored], ['10', ['q: n=8;k:9% (expected a count, a list (512,1024) or a range (64-512/64))']]);
    });

    it('names each input it cannot read and keeps the rest', () => {
      const { search, ignored, view } = decode(`${encode(spec(), catalog)}&q=n:abc;k:1000;zz:1;tp:%253Cscript%253E;u:yes;rc:;h:99;mbs:2;mbs:4;o:x;junk;n:8;sp:%25ZZ`, catalog);
      assert.equal(view, 'search');
      assert.deepEqual(ignored, [
        'q: n=abc (expected a count, a list (512,1024) or a range (64-512/64))', 'q: k=1000 (expected from 1 to 100)',
        'q: zz=1 (unknown search input)', 'q: tp=<script> (expected a value or a list such as 1,2,4)', 'q: u=yes (expected 1 or 0)',
        'q: rc= (expected some of none, selective, full1, full)', 'q: h=99 (expected a percentage from 0 to 98)', 'q: mbs=4 (repeated)',
        'q: o=x (expected step_time, tokens_per_s_per_gpu)', 'q: junk (no value)', 'q: n=8 (repeated)', 'q: sp=%ZZ (malformed escape)',
      ]);
      assert.deepEqual(search, { ...defaultSearchInputs(), micro_batch_size: '2' });
    });

    it('never throws on random link values, and what it reads always makes a search document', () => {
      let state = 20261205;
      const next = () => { state = (state * 1664525 + 1013904223) >>> 0; return state / 2 ** 32; };
      const keys = ['n', 'gbs', 'seq', 'tp', 'pp', 'vpp', 'cp', 'ep', 'etp', 'mbs', 'mtp', 'rc', 'z', 'sp', 'u', 'h', 'k', 'o', 'x', ''];
      const values = ['1', '0', '-1', '8', '1,2', '64-512/64', '512-64', '1e3', '99999999999999999999', 'any', 'none,full', '3,4', 'both', '1.5',
        '', '%', '%25', '%3B', '<b>', 'é', ' 8 ', ',', '1,,2', 'true', 'step_time'];
      const pick = (list) => list[Math.floor(next() * list.length)];
      const base = spec();
      for (let i = 0; i < 2000; i += 1) {
        const items = Array.from({ length: Math.floor(next() * 8) }, () => (next() < 0.9 ? `${pick(keys)}:${pick(values)}` : pick(values)));
        const ignored = [];
        const inputs = decodeSearch(items.join(next() < 0.9 ? ';' : ':'), ignored);
        const { problems } = searchDocument(base, inputs);
        assert.deepEqual(problems, {}, `q=${items.join(';')}`);
        assert.deepEqual(decode(encode(base, catalog, { view: 'search', search: inputs }), catalog).search, inputs, 'round trip');
      }
    });
  });

  describe('state/search_spec.js', () => {
    it('reads degree lists and GPU counts', () => {
      assert.equal(parseChoices(''), undefined);
      assert.equal(parseChoices('any'), undefined);
      assert.equal(parseChoices(' 8 '), 8);
      assert.deepEqual(parseChoices('1, 2,4,2'), [1, 2, 4]);
      for (const bad of ['0', '1.5', 'two', '1,,2', '-1']) assert.equal(parseChoices(bad), null, bad);
      assert.deepEqual(parseGpus('64-512/64'), { min: 64, max: 512, step: 64 });
      assert.deepEqual(parseGpus('512, 1024'), [512, 1024]);
      assert.equal(parseGpus('512-64'), null);
    });

    it('builds the search document from the calculator\'s spec and the inputs', () => {
      const spec = decode('#v=1&m=llama3-70b&s=h100-sxm-80gb&n=64&seq=8192&mbs=1&gbs=1024&tp=8&sp=1&pp=4&ogr=1&fce=1&s.gpu.hbm_capacity_gib=96', catalog).state;
      const inputs = { ...defaultSearchInputs(), gpus: '1024', tp: '2,4,8', headroom: '5', objective: 'tokens_per_s_per_gpu' };
      const { document, problems } = searchDocument(spec, inputs);
      assert.deepEqual(problems, {});
      assert.deepEqual(document.model, { preset: 'llama3-70b' });
      assert.deepEqual(document.system, { preset: 'h100-sxm-80gb', gpu: { hbm_capacity_gib: 96 } });
      assert.equal(document.num_gpus, 1024);
      assert.equal(document.global_batch_size, 1024);
      assert.equal(document.seq_len, 8192);
      assert.deepEqual(document.training, { overlap_grad_reduce: true, fused_cross_entropy: true });
      assert.deepEqual(document.constraints.tp, [2, 4, 8]);
      assert.deepEqual(document.constraints.micro_batch_size, [1, 2, 4, 8]);
      assert.equal(document.constraints.recompute.length, 4);
      assert.deepEqual(document.constraints.zero_stage, [1]);
      assert.equal(document.memory_headroom, 0.05);
      assert.equal(document.objective, 'tokens_per_s_per_gpu');
      // An empty headroom is the core's default (the memory verdict's), stated in its schema.
      const byDefault = searchDocument(spec, { ...inputs, headroom: '' }).document;
      assert.equal('memory_headroom' in byDefault, false);
      assert.equal(defaultHeadroomPercent(), 5);
      assert.equal(defaultSearchInputs().headroom, '');
      const bad = searchDocument(spec, { ...inputs, gpus: 'x', pp: '0', recompute: [], zero: [] });
      assert.equal(bad.document, null);
      assert.deepEqual(Object.keys(bad.problems).sort(), ['gpus', 'pp', 'recompute', 'zero']);
    });

    it('passes the calculator\'s pipeline schedule to the search as its constraint, and its layout as a shared key', () => {
      const spec = decode('#v=1&m=llama3-8b&s=h100-sxm-80gb&n=16&seq=4096&mbs=1&gbs=64&pp=4&psc=dualpipe&ppl=Et*8%7Ct*8%7Ct*8%7Ct*8L', catalog).state;
      const { document, problems } = searchDocument(spec, defaultSearchInputs());
      assert.deepEqual(problems, {});
      assert.equal(document.constraints.pipeline_schedule, 'dualpipe');
      assert.deepEqual(document.training, { pipeline_layout: 'Et*8|t*8|t*8|t*8L' });
    });

    it('passes the calculator\'s optimizer offload to the search as its constraint, not as a degree input', () => {
      const spec = decode('#v=1&m=llama3-8b&s=h100-sxm-80gb&n=8&seq=4096&mbs=1&gbs=64&oof=0.5', catalog).state;
      const { document, problems } = searchDocument(spec, defaultSearchInputs());
      assert.deepEqual(problems, {});
      assert.equal(document.constraints.optimizer_offload_fraction, 0.5);
      assert.equal(document.training?.optimizer_offload_fraction, undefined);
      const keys = searchDegrees().map((d) => d.key);
      assert.ok(!keys.includes('activation_offload_layers') && !keys.includes('optimizer_offload_fraction'), keys.join());
    });

    it('searches on a system scaled by the core (scale_system), and leaves the chosen keys out of training', async () => {
      const spec = decode('#v=1&m=llama3-70b&s=h100-sxm-80gb&n=64&seq=8192&mbs=1&gbs=1024&tp=8&sp=1&pp=4&z=2&rc=full&rcm=block&rcn=2&l1=10', catalog).state;
      const scaled = await call('scale_system', JSON.stringify({ system: toConfig(spec).system, figure: 'peak_flops', factor: 2 }));
      assert.equal(scaled.ok, true, JSON.stringify(scaled));
      const { document } = searchDocument(spec, defaultSearchInputs(), scaled.result.system);
      assert.equal(document.system.gpu.peak_tflops.bf16, 2 * 989.4);
      assert.equal(document.system.num_gpus, undefined, 'the GPU count is the search\'s own');
      assert.equal(document.num_gpus, 64);
      assert.equal(document.training, undefined, 'tp, zero_stage, recompute and the stage sizes are the search\'s to choose');
      assert.deepEqual(searchDegrees().map((d) => d.key).filter((k) => ['tp', 'pp', 'micro_batch_size'].includes(k)), ['tp', 'pp', 'micro_batch_size']);
      assert.ok(!searchDegrees().some((d) => ['zero_stage', 'max_tp', 'recompute'].includes(d.key)), 'these have inputs of their own');
    });
  });

  describe('engine/search_pages.js', () => {
    const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);
    // A fake engine of `total` layout classes: the plan orders them (reversed, as
    // floors might), pages answer after `delay` ms with envelope text, as Module.call does.
    const fakeCalls = (total, log, delay = 1) => [0, 1, 2].map((worker) => async (op, input) => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (op === 'search_merge') return JSON.stringify({ ok: true, result: { pages: JSON.parse(input).pages.map((p) => p.page.classes) } });
      assert.equal(op, 'search');
      const page = JSON.parse(input).page;
      if (page.plan) return JSON.stringify({ ok: true, result: { order: { classes: range(0, total).reverse() } } });
      log.push([worker, page.classes, page.bound ?? null]);
      // A class's plan: the class numbered 100 is the fastest; lower numbers are slower.
      const top = page.classes.map((c) => ({ metrics: { iteration_s: c === 100 ? 1 : 1000 - c, peak_bytes: c, tokens_per_s_per_gpu: c } }));
      return JSON.stringify({ ok: true, result: { page: { classes: page.classes }, top, pareto: [] } });
    });

    it('splits the ordered classes into growing, bounded pages for the workers', () => {
      assert.deepEqual(splitPages(range(0, 16), 16, 3), []);
      const pages = splitPages(range(0, 166), 16, 2);
      assert.deepEqual(pages.map((p) => p.length), [16, 32, 38, 38, 26]);
      assert.deepEqual(pages.flat(), range(16, 166), 'every class once, in the plan\'s order');
      const big = splitPages(range(0, 1e5), 0, 4);
      assert.ok(big.every((p) => p.length <= 256), 'pages stay small enough to cancel soon');
      assert.equal(big.flat().length, 1e5);
    });

    it('plans, runs the best classes first and alone, bounds the other pages, and merges every class', async () => {
      const log = [];
      const progress = [];
      const best = [];
      const search = pagedSearch(() => fakeCalls(166, log));
      const merged = await search.start({ model: 'x', top_k: 3 }, ({ done, total, best: plan }) => {
        progress.push(`${done}/${total}`);
        best.push(plan?.metrics.iteration_s ?? null);
      });
      assert.deepEqual(merged.result.pages.flat().sort((a, b) => a - b), range(0, 166), 'the merge sees every class once');
      assert.deepEqual(log[0][1], range(150, 166).reverse(), 'the plan\'s first 16 classes run first');
      assert.equal(log[0][2], null, 'the first page has no bound yet');
      assert.ok(log.slice(1).every(([, , bound]) => bound && bound.top.length === 3), 'later pages carry the bound of the pages done');
      assert.equal(progress[0], '0/0', 'progress from the start, before the plan has counted the classes');
      assert.equal(progress[1], '0/166');
      assert.equal(progress[2], '16/166');
      assert.equal(progress[progress.length - 1], '166/166');
      assert.equal(best[best.length - 1], 1, 'the best plan so far ends at the fastest');
      assert.ok(best.slice(2).every((b, i) => i === 0 || b <= best[i + 1]), `the best so far never gets worse: ${best}`);
      assert.ok(new Set(log.map(([worker]) => worker)).size >= 2, 'more than one worker took pages');
    });

    it('drops, before the merge, top plans that cannot enter the merged top K', () => {
      const bound = pageBound({ top_k: 2 });
      const pages = [{ top: [{ metrics: { iteration_s: 1 } }, { metrics: { iteration_s: 5 } }] },
        { top: [{ metrics: { iteration_s: 2 } }, { metrics: { iteration_s: 3 } }] }];
      pages.forEach((page) => bound.add(page));
      bound.trim(pages);
      assert.deepEqual(pages.map((p) => p.top.map((e) => e.metrics.iteration_s)), [[1], [2]]);
      assert.deepEqual(bound.json().top, [{ iteration_s: 1 }, { iteration_s: 2 }]);
      const diverse = [{ top: [{ metrics: { iteration_s: 9 } }] }];
      const kept = pageBound({ top_k: 1, diversity: 'per_layout' });
      kept.add({ top: [{ metrics: { iteration_s: 1 } }] });
      kept.trim(diverse);
      assert.equal(diverse[0].top.length, 1, 'with diversity the pages are left whole');
    });

    it('picks the better plan for the objective', () => {
      const fast = { metrics: { iteration_s: 1, tokens_per_s_per_gpu: 10, gpu_hours: 9, time_to_train_s: 5 } };
      const lean = { metrics: { iteration_s: 2, tokens_per_s_per_gpu: 20, gpu_hours: 3, time_to_train_s: 6 } };
      assert.equal(betterPlan(lean, fast, 'step_time'), fast);
      assert.equal(betterPlan(fast, lean, undefined), fast);
      assert.equal(betterPlan(fast, lean, 'tokens_per_s_per_gpu'), lean);
      assert.equal(betterPlan(fast, lean, 'gpu_hours'), lean);
      assert.equal(betterPlan(lean, fast, 'time_to_train'), fast);
      assert.equal(betterPlan(null, lean, 'step_time'), lean);
      assert.equal(betterPlan(fast, null, 'step_time'), fast);
      assert.equal(betterPlan(fast, { ...fast }, 'step_time'), fast, 'a tie keeps the earlier plan');
    });

    it('cancels, and lets the newest search win', async () => {
      const log = [];
      const search = pagedSearch(() => fakeCalls(100000, log, 5));
      const first = search.start({ n: 1 });
      const second = search.start({ n: 2 });
      assert.deepEqual(await first, { cancelled: true });
      const third = search.start({ n: 3 }, () => search.cancel());
      assert.deepEqual(await second, { cancelled: true });
      assert.deepEqual(await third, { cancelled: true });
      const small = pagedSearch(() => fakeCalls(40, log, 1));
      assert.equal((await small.start({ n: 5 })).ok, true);
      let stopped = 0;
      const hard = pagedSearch(() => fakeCalls(100000, log, 5), () => { stopped += 1; });
      const fourth = hard.start({ n: 4 });
      hard.cancel({ hard: true });
      assert.deepEqual(await fourth, { cancelled: true }, 'a cancel answers at once');
      assert.equal(stopped, 1, 'an explicit cancel stops the helper workers');
      assert.equal(search.running(), false);
    });

    it('passes an error envelope through, from the plan or from a page', async () => {
      const failing = pagedSearch(() => [async () => JSON.stringify({ ok: false, errors: [{ path: '/num_gpus', message: 'bad' }] })]);
      assert.deepEqual(await failing.start({}), { ok: false, errors: [{ path: '/num_gpus', message: 'bad' }] });
      const pageFails = pagedSearch(() => [async (op, input) => {
        const page = JSON.parse(input).page;
        if (page.plan) return JSON.stringify({ ok: true, result: { order: { classes: range(0, 40) } } });
        if (page.classes[0] === 0) return JSON.stringify({ ok: true, result: { page: { classes: page.classes }, top: [] } });
        return JSON.stringify({ ok: false, errors: [{ path: '/page', message: 'late failure' }] });
      }]);
      assert.match((await pageFails.start({})).errors[0].message, /late failure/);
    });
  });

  describe('engine/client.js', () => {
    it('keeps one request in flight and lets the newest pending one win', async () => {
      const calls = [];
      const release = [];
      const estimate = newestWins((text) => new Promise((resolve) => {
        calls.push(JSON.parse(text).n);
        release.push(() => resolve({ ok: true, n: JSON.parse(text).n }));
      }));
      const answers = [1, 2, 3, 4, 5].map((n) => estimate({ n }));
      assert.deepEqual(calls, [1], 'only the first is sent at once');
      release[0]();
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.deepEqual(calls, [1, 5], 'then only the newest');
      release[1]();
      assert.deepEqual(await Promise.all(answers), [
        { superseded: true }, { superseded: true }, { superseded: true }, { superseded: true }, { ok: true, n: 5 }]);
      const failing = newestWins(() => Promise.reject(new Error('trap')));
      await assert.rejects(failing({}), /trap/);
    });
  });

  describe('lib/format.js', () => {
    it('formats the core SI values in human units', () => {
      assert.equal(formatBytes(80 * 1024 ** 3), '80.0 GiB');
      assert.equal(formatBytes(3410804736), '3.18 GiB');
      assert.equal(formatBytes(256 * 1024 ** 2), '256 MiB');
      assert.equal(formatBytes(0), '0 GiB');
      assert.equal(formatSeconds(0.01234), '12.3 ms');
      assert.equal(formatSeconds(3.74), '3.74 s');
      assert.equal(formatSeconds(446000), '5.16 days');
      assert.equal(formatPercent(0.425), '42.5 %');
      assert.equal(formatTokens(15e12), '15T');
      assert.equal(compactCount(2.5e9), '2.5B');
      assert.equal(parseCount('15T'), 15e12);
      assert.equal(parseCount(' 2.5 B '), 2.5e9);
      assert.ok(Number.isNaN(parseCount('-1')));
      assert.ok(Number.isNaN(parseCount('1e400')));
    });
  });
}
