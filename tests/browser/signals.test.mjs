// A browser-test run stopped from outside (SIGTERM from a timeout, SIGHUP
// from a closed terminal) ends at once with a line that says so, instead of
// going on with its browser closed under it (every later test failing with
// "Target page, context or browser has been closed"). Runs one real suite in
// a child process and stops it in the middle of a test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const here = path.dirname(fileURLToPath(import.meta.url));

export function signalTests({ url, cli, module, artifacts }) {
  describe('a run stopped from outside', () => {
    for (const [signal, code] of [['SIGTERM', 143], ['SIGHUP', 129]]) {
      it(`stops at once on ${signal} and says why`, async () => {
        const child = spawn(process.execPath, [path.join(here, 'run.mjs'), '--url', url, '--cli', cli, '--module', module,
          '--artifacts', path.join(artifacts, 'signals'), '--only', 'first'], { cwd: here, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (chunk) => { out += chunk; });
        child.stderr.on('data', (chunk) => { out += chunk; });
        const exited = new Promise((resolve) => child.on('exit', (status, bySignal) => resolve({ status, bySignal })));
        // Wait until a page test is under way (its page is open), then stop the run.
        const started = Date.now();
        const testStarted = /^ {4}# Subtest: /m;  // a test inside the suite (its page is open)
        while (!testStarted.test(out) && Date.now() - started < 120000) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.match(out, testStarted, 'the suite started');
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const sentAt = Date.now();
        child.kill(signal);
        const { status } = await exited;
        const seconds = (Date.now() - sentAt) / 1000;
        assert.equal(status, code, out.slice(-2000));
        assert.match(out, new RegExp(`# browser tests stopped by ${signal} from outside`));
        assert.doesNotMatch(out, /has been closed/, 'no test ran on with its browser closed');
        assert.doesNotMatch(out, /^ok \d/m, 'the interrupted suite is not reported as passed');
        assert.ok(seconds < 30, `stopped in ${seconds.toFixed(1)} s`);
      });
    }
  });
}
