import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Workload } from '../../src/domain/index.js';
import { arrivalTimes, lengthSampler, sampleRequests } from '../../src/workload/sample.js';
import { createRng } from '../../src/util/rng.js';
import { mean } from '../../src/metrics/stats.js';
import { loadYamlFile } from '../../src/util/yaml.js';

test('the same seed gives the same requests; another seed differs', () => {
  const w = loadYamlFile(new URL('../../data/workloads/code.yaml', import.meta.url).pathname, Workload);
  const a = sampleRequests(w, createRng(7));
  const b = sampleRequests(w, createRng(7));
  const c = sampleRequests(w, createRng(8));
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  const withPrefix = a.filter((r) => r.prefixGroup !== null).length / a.length;
  assert.ok(withPrefix > 0.9 && withPrefix <= 1, `prefix fraction ${withPrefix}`);
});

test('lognormal lengths hit their target mean and stay within clip bounds', () => {
  const s = lengthSampler({ dist: 'lognormal', mean: 300, std: 200, min: 1, max: 100000 }, createRng(1));
  const xs = Array.from({ length: 20000 }, s);
  assert.ok(Math.abs(mean(xs) - 300) / 300 < 0.03, `mean ${mean(xs)}`);
  const z = lengthSampler({ dist: 'zipf', s: 1.2, min: 5, max: 50 }, createRng(2));
  const zs = Array.from({ length: 5000 }, z);
  assert.ok(Math.min(...zs) >= 5 && Math.max(...zs) <= 50);
  assert.ok(zs.filter((v) => v === 5).length > zs.filter((v) => v === 50).length * 5);
});

test('open-loop arrivals end exactly at N/rate and have the gamma CV', () => {
  const t = arrivalTimes({ kind: 'gamma', rate_rps: 10, burstiness: 0.25 }, 4000, createRng(3));
  assert.ok(t !== null);
  assert.ok(Math.abs((t[t.length - 1] as number) - 400) < 1e-9);
  const gaps = Array.from(t, (v, i) => v - (i === 0 ? 0 : (t[i - 1] as number)));
  const m = mean(gaps);
  const cv = Math.sqrt(mean(gaps.map((g) => (g - m) ** 2))) / m;
  assert.ok(Math.abs(cv - 2) < 0.15, `cv ${cv}`); // CV = 1/sqrt(burstiness)
  assert.equal(arrivalTimes({ kind: 'closed', concurrency: 4 }, 10, createRng(1)), null);
});
