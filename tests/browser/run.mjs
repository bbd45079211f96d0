// Tests of the trainsim page: its pure modules under node, then the page in
// Debian's Chromium driven by playwright-core (node's test runner). The site
// must already be served:
//   node run.mjs --url http://127.0.0.1:PORT/ --cli build/native/core/trainsim
//                [--artifacts build/browser-artifacts]
// tests/scripts/run_web_tests.sh builds, serves and runs all of this.
import { parseArgs } from './harness.mjs';
import { hashHardeningTests } from './hash_hardening.test.mjs';
import { moduleTests } from './page_modules.test.mjs';
import { pageTests } from './page.test.mjs';

moduleTests();
pageTests(parseArgs(process.argv.slice(2)));
hashHardeningTests(parseArgs(process.argv.slice(2)));
