// Tests of the trainsim page: its pure modules under node, then the page in
// Debian's Chromium driven by playwright-core (node's test runner). The site
// must already be served:
//   node run.mjs --url http://127.0.0.1:PORT/ --cli build/native/core/trainsim
//                --module build/wasm/site/trainsim_wasm.mjs
//                [--artifacts build/browser-artifacts] [--site build/wasm/site] [--only NAME[,NAME]]
// (the module tests load the catalog and the schema from MODULE, as the page does;
// --site is the served folder, for the tests of web/serve.sh)
// (NAME: modules, page, hardening, search, interop, first, inspect, polish, serve, signals, form).
// tests/scripts/run_web_tests.sh builds, serves and runs all of this.
import { parseArgs } from './harness.mjs';
import { hashHardeningTests } from './hash_hardening.test.mjs';
import { moduleTests } from './page_modules.test.mjs';
import { issue17ModuleTests } from './page_modules_issue17.test.mjs';
import { pageTests } from './page.test.mjs';
import { searchTests } from './search.test.mjs';
import { compareInteropTests } from './compare_interop.test.mjs';
import { firstContactTests } from './first_contact.test.mjs';
import { serveTests } from './serve.test.mjs';
import { signalTests } from './signals.test.mjs';
import { inspectTests } from './inspect.test.mjs';
import { polishTests } from './polish.test.mjs';
import { trainingFormTests } from './training_form.test.mjs';

const argv = process.argv.slice(2);
const onlyAt = argv.indexOf('--only');
const only = onlyAt >= 0 ? new Set(argv.splice(onlyAt, 2)[1].split(',')) : null;
const wanted = (name) => !only || only.has(name);
const args = parseArgs(argv);

if (wanted('modules')) {
  await moduleTests(args);
  await issue17ModuleTests(args);
}
if (wanted('page')) pageTests(args);
if (wanted('hardening')) hashHardeningTests(args);
if (wanted('search')) searchTests(args);
if (wanted('interop')) compareInteropTests(args);
if (wanted('first')) firstContactTests(args);
if (wanted('serve')) serveTests(args);
if (wanted('signals')) signalTests(args);
if (wanted('inspect')) inspectTests(args);
if (wanted('polish')) polishTests(args);
if (wanted('form')) trainingFormTests(args);
