// Strategy search speed in WebAssembly under node (figures go to README,
// never a pass/fail test): the frontier-scale searches of search_bench.cpp,
// through the module's call('search', ...) in one call, as a page worker
// runs a search on one core. The documents are read from search_bench.cpp,
// so both benchmarks search the same spaces.
//   node tests/bench/search_bench_wasm.mjs MODULE.mjs [--runs N] [--only NAME[,NAME]]
// MODULE.mjs: the single-file module (build/wasm/site/trainsim_wasm.mjs).
// Each search runs in a process of its own (like one benchmark per process
// natively), N times (default 3); printed per search: wall time of each
// run and their median, the CPU time of the median run (user + system: on a
// machine shared with other jobs the wall time is the CPU time plus waiting),
// the search's counts, the module's linear memory
// after the runs (WebAssembly memory only grows, so this is its peak) and
// the process's peak resident memory (node itself included: about 45 MiB
// with the module loaded and no search; see "baseline").
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SEARCHES = {
  baseline: null,  // the module loaded, no search: node's own footprint
  DeepSeekV3UnevenOn1024Gpus: 'kDeepSeekV3On1024Gpus',
  DeepSeekV3On512To4096Gpus: 'kDeepSeekV3On512To4096Gpus',
  Llama70bOn1024Gpus: 'kLlama70bOn1024Gpus',
};

// A raw string literal `const char* NAME = R"({...})";` of search_bench.cpp.
function documentOf(constant) {
  const source = fs.readFileSync(path.join(here, 'search_bench.cpp'), 'utf8');
  const match = new RegExp(`const char\\* ${constant} = R"\\((\\{[\\s\\S]*?\\})\\)";`).exec(source);
  if (!match) throw new Error(`${constant} not found in search_bench.cpp`);
  return JSON.parse(match[1]);
}

function parse(argv) {
  const args = { module: '', runs: 3, only: null, child: false };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--runs') args.runs = Number(argv[++i]);
    else if (argv[i] === '--only') args.only = argv[++i].split(',');
    else if (argv[i] === '--child') args.child = true;
    else args.module = argv[i];
  }
  if (!args.module || !(args.runs >= 1)) {
    throw new Error('usage: node search_bench_wasm.mjs MODULE.mjs [--runs N] [--only NAME[,NAME]]');
  }
  return args;
}

const MiB = 1024 * 1024;

// One search, N runs, in this process; prints one JSON line.
async function child(args, name) {
  const { default: createTrainsim } = await import(pathToFileURL(path.resolve(args.module)).href);
  const module = await createTrainsim();
  const constant = SEARCHES[name];
  const text = constant ? JSON.stringify(documentOf(constant)) : null;
  const times = [];
  const cpu = [];
  let counts = null;
  for (let i = 0; constant && i < args.runs; i += 1) {
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    const envelope = JSON.parse(module.call('search', text));
    times.push((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1e6);
    if (!envelope.ok) throw new Error(`${name}: ${JSON.stringify(envelope.errors)}`);
    counts = envelope.result.counts;
  }
  const heap = module.HEAP8?.buffer?.byteLength ?? module.wasmMemory?.buffer?.byteLength ?? null;
  console.log(JSON.stringify({
    name, times, cpu, counts,
    wasm_memory_mib: heap === null ? null : heap / MiB,
    peak_rss_mib: process.resourceUsage().maxRSS / 1024,
  }));
}

const medianAt = (xs) => xs.indexOf([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]);

async function main() {
  const args = parse(process.argv.slice(2));
  if (args.child) {
    await child(args, args.only[0]);
    return;
  }
  const names = Object.keys(SEARCHES).filter((n) => !args.only || args.only.includes(n) || n === 'baseline');
  console.log(`# search in WebAssembly under node ${process.version}, ${args.runs} run(s) per search, one process per search`);
  for (const name of names) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), args.module, '--runs', String(args.runs), '--only', name, '--child'],
      { encoding: 'utf8', maxBuffer: 1 << 24 });
    const r = JSON.parse(out.trim().split('\n').pop());
    const c = r.counts;
    const work = c ? `, ${c.considered} combinations, ${c.skipped + c.bounded} skipped by the floors, ${c.evaluated} estimated, `
      + `${c.timed} simulated, ${c.feasible} fit` : '';
    const m = medianAt(r.times);
    const time = r.times.length ? `${r.times[m].toFixed(2)} s median of ${r.times.map((t) => t.toFixed(2)).join(', ')} s (CPU ${r.cpu[m].toFixed(2)} s)` : 'no search';
    const memory = `wasm memory ${r.wasm_memory_mib === null ? '?' : r.wasm_memory_mib.toFixed(0)} MiB, peak RSS ${r.peak_rss_mib.toFixed(0)} MiB`;
    console.log(`${name}: ${time}; ${memory}${work}`);
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
