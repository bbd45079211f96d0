// web/serve.sh's arguments: --port N, --port=N, -p N, a plain port, PORT,
// --host, --help, and a clear error for a bad argument (no browser needed).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function serveTests({ site }) {
  describe('web/serve.sh', () => {
    const serve = path.join(root, 'web/serve.sh');
    const env = { ...process.env, TRAINSIM_SITE_DIR: site };
    delete env.PORT;

    // Starts serve.sh with `args`, waits for the URL it prints, fetches the
    // page from it and stops the server.
    async function servesThePage(args, extraEnv = {}) {
      const child = spawn(serve, args, { env: { ...env, ...extraEnv } });
      try {
        const address = await new Promise((resolve, reject) => {
          let out = '';
          const timer = setTimeout(() => reject(new Error(`no URL from serve.sh ${args.join(' ')}: ${out}`)), 60000);
          child.stdout.on('data', (chunk) => {
            out += chunk;
            const match = /http:\/\/([\w.[\]:]+):(\d+)\//.exec(out);
            if (match) { clearTimeout(timer); resolve({ host: match[1], port: Number(match[2]) }); }
          });
          child.stderr.on('data', (chunk) => { out += chunk; });
          child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve.sh exited ${code}: ${out}`)); });
        });
        const response = await fetch(`http://127.0.0.1:${address.port}/`);
        assert.equal(response.status, 200);
        assert.match(await response.text(), /<title>trainsim/);
        return address;
      } finally {
        child.kill('SIGTERM');
      }
    }

    it('accepts --port N, --port=N, -p N, a plain port and PORT, and --host', { skip: !site && 'no --site given' }, async () => {
      const free = 20000 + Math.floor(Math.random() * 20000);
      assert.equal((await servesThePage(['--port', String(free)])).port, free);
      assert.equal((await servesThePage([`--port=${free + 1}`])).port, free + 1);
      assert.equal((await servesThePage(['-p', String(free + 2)])).port, free + 2);
      assert.equal((await servesThePage([String(free + 3)])).port, free + 3);
      assert.equal((await servesThePage([], { PORT: String(free + 4) })).port, free + 4);
      assert.notEqual((await servesThePage(['--port', '0'])).port, 0, 'port 0 picks a free one');
      assert.equal((await servesThePage(['--host', '127.0.0.1', '--port', String(free + 5)])).host, 'localhost');
    });

    it('prints its usage for --help and names a bad argument', () => {
      const help = spawnSync(serve, ['--help'], { env, encoding: 'utf8' });
      assert.equal(help.status, 0);
      assert.match(help.stdout, /Usage: \.\/web\/serve\.sh \[--port N\] \[--host ADDRESS\] \[PORT\]/);
      for (const [args, message] of [[['--port'], /--port needs a port number/], [['--bogus'], /unknown option --bogus/],
        [['--port', 'abc'], /the port must be a number from 0 to 65535, got "abc"/], [['70000'], /from 0 to 65535, got 70000/]]) {
        const run = spawnSync(serve, args, { env, encoding: 'utf8' });
        assert.equal(run.status, 2, args.join(' '));
        assert.match(run.stderr, message);
      }
    });
  });
}
