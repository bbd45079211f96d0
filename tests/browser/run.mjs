// Browser tests of the trainsim page (node's test runner + playwright-core
// driving Debian's Chromium). The site must already be served:
//   node run.mjs --url http://127.0.0.1:PORT/ --cli build/native/core/trainsim
//                [--artifacts build/browser-artifacts]
// tests/scripts/run_web_tests.sh builds, serves and runs all of this.
import { parseArgs } from './harness.mjs';
import { pageTests } from './page.test.mjs';

pageTests(parseArgs(process.argv.slice(2)));
