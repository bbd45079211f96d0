// Node-side tests of the page's pure modules (url.js, config.js,
// format.js): no browser needed. The catalog is read from presets/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decode, encode } from '../../web/url.js';
import { defaultSpec, fromConfig, toConfig } from '../../web/config.js';
import { compactCount, formatBytes, formatPercent, formatSeconds, formatTokens, parseCount } from '../../web/format.js';
import { newestWins } from '../../web/engine.js';
import { randomHashes } from './random_hashes.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function loadCatalog() {
  const load = (kind) => fs.readdirSync(path.join(root, 'presets', kind)).sort().map((file) => {
    const doc = JSON.parse(fs.readFileSync(path.join(root, 'presets', kind, file), 'utf8'));
    return { id: doc.id, label: doc.label, doc };
  });
  return { version: 'test', models: load('models'), systems: load('systems') };
}

export function moduleTests() {
  const catalog = loadCatalog();
  const hasModel = (id) => catalog.models.some((p) => p.id === id);

  describe('url.js and config.js', () => {
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

  describe('engine.js', () => {
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

  describe('format.js', () => {
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
