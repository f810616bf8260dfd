#!/usr/bin/env node
// Node 20's test runner takes paths, not globs, so we resolve test/**/*.test.ts ourselves
// and hand them to `node --import tsx --test`. Optional filters: substrings of paths.
import { readdirSync, statSync } from 'node:fs';
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
const filters = process.argv.slice(2);
const files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  // LMB_LOOPBACK_ONLY: the load runner refuses any host off this machine, so no test can send traffic
  // elsewhere however it is written.
  { stdio: 'inherit', cwd: root, env: { ...process.env, LMB_TEST: '1', LMB_LOOPBACK_ONLY: '1' } },
);
process.exit(res.status ?? 1);
