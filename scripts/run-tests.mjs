#!/usr/bin/env node
// Node 20's test runner takes paths, not globs, so we resolve test/**/*.test.ts ourselves
// and hand them to `node --import tsx --test`. Optional filters: substrings of paths.
//
// Two lanes. The default lane (`npm test`) asserts behaviour: what was sent, what was computed, the
// control law, lower bounds no clock can break (a time-out never fires early). A file with the line
// `// lmb-test: timing` asserts real-time accuracy against a wall clock (the client's TTFT within
// milliseconds of a stub's, a control loop settling within a minute of real time); on a loaded
// machine those can miss by chance, so they run only in the timing lane (`npm run test:timing`,
// `--lane timing`), which CI runs after the default lane and reports separately.
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
const args = process.argv.slice(2);
const laneAt = args.indexOf('--lane');
const lane = laneAt < 0 ? 'default' : args[laneAt + 1];
if (lane !== 'default' && lane !== 'timing') {
  console.error(`--lane must be default or timing, not ${lane}`);
  process.exit(2);
}
const filters = laneAt < 0 ? args : args.filter((_, i) => i !== laneAt && i !== laneAt + 1);
const TIMING = /^\/\/ lmb-test: timing$/m;
const files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .filter((f) => TIMING.test(readFileSync(join(root, f), 'utf8')) === (lane === 'timing'))
  .sort();
if (files.length === 0) {
  console.error(`no test files matched in the ${lane} lane`);
  process.exit(1);
}
// A file with the line `// lmb-test: alone` measures real time (latency against a live server, the
// client's own event-loop lag) and runs after the rest, one file at a time: beside another test file
// on a 2-core machine the OS starves its threads and what it measures is the neighbour.
const ALONE = /^\/\/ lmb-test: alone$/m;
// Every timing-lane file runs alone.
const alone = files.filter((f) => lane === 'timing' || ALONE.test(readFileSync(join(root, f), 'utf8')));
const together = files.filter((f) => !alone.includes(f));
const hfCache = mkdtempSync(join(tmpdir(), 'lmb-test-hf-'));
const run = (list, concurrency) =>
  list.length === 0
    ? 0
    : (spawnSync(
        process.execPath,
        ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...list],
        // LMB_LOOPBACK_ONLY: the load runner refuses any host off this machine, so no test can send traffic
        // elsewhere however it is written.
        // HF_HUB_OFFLINE and an empty HF_HUB_CACHE: no test reads the user's Hugging Face cache or asks
        // the hub; the tests that resolve models from a cache or a hub make their own, on loopback.
        { stdio: 'inherit', cwd: root, env: { ...process.env, LMB_TEST: '1', LMB_LOOPBACK_ONLY: '1', HF_HUB_OFFLINE: '1', HF_HUB_CACHE: hfCache, HF_HOME: hfCache } },
      ).status ?? 1);
const first = run(together, 2);
if (alone.length > 0) console.log(`\n# ${alone.length} timing-sensitive file(s), one at a time: ${alone.join(' ')}`);
const second = run(alone, 1);
process.exit(first !== 0 ? first : second);
