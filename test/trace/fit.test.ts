import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { maxRequestTokens, meanLength, withoutTraceData, Workload, type LengthDist } from '../../src/domain/index.js';
import { normalCdf } from '../../src/util/normal.js';
import { clippedLognormalMean, fitArrival, fitLength, readTraceFile, traceName, traceWorkload, type ParsedTrace } from '../../src/trace/index.js';
import { createRng } from '../../src/util/rng.js';
import { arrivalTimes, lengthSampler, sampleRequests, workloadArrivals } from '../../src/workload/sample.js';

const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const read = (name: string): ParsedTrace => readTraceFile(`${dir}${name}`, name);
const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
const rel = (a: number, b: number): number => Math.abs(a - b) / b;

function sampledMean(d: LengthDist, n: number, seed: number): number {
  const draw = lengthSampler(d, createRng(seed));
  let s = 0;
  for (let i = 0; i < n; i++) s += draw();
  return s / n;
}

test('normal CDF and the clipped lognormal mean agree with known values and with sampling', () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
  assert.ok(Math.abs(normalCdf(1.959964) - 0.975) < 1e-6);
  assert.ok(Math.abs(normalCdf(-1) - 0.158655) < 1e-6);
  const [mu, sigma, lo, hi] = [6, 1.2, 20, 2000];
  const rng = createRng(3);
  let s = 0;
  const n = 200_000;
  for (let i = 0; i < n; i++) s += Math.min(hi, Math.max(lo, Math.exp(mu + sigma * rng.normal())));
  assert.ok(rel(clippedLognormalMean(mu, sigma, lo, hi), s / n) < 0.01);
});

test("fitted lengths keep the trace's range and, clipped, its mean", () => {
  for (const name of ['azure-code-2023-head300.csv', 'burstgpt-1-head400.csv', 'mooncake-conversation-head300.jsonl']) {
    const t = read(name);
    for (const xs of [t.requests.map((r) => r.inputTokens), t.requests.map((r) => r.outputTokens)]) {
      const d = fitLength(xs);
      assert.equal(d.dist, 'lognormal', name);
      if (d.dist !== 'lognormal') continue;
      assert.equal(d.min, Math.min(...xs));
      assert.equal(d.max, Math.max(...xs));
      // The unclipped mean of a heavy tail is far above the data's; the clipped draws are not.
      assert.ok(rel(sampledMean(d, 100_000, 7), mean(xs)) < 0.02, `${name}: sampled ${sampledMean(d, 100_000, 7)} vs ${mean(xs)}`);
    }
  }
  assert.deepEqual(fitLength([64, 64, 64]), { dist: 'fixed', value: 64 });
});

test('arrivals: the mean rate over the trace, a gamma shape fitted to the gaps, ÷ speed', () => {
  // Gaps drawn from a gamma of shape 0.5 at 10 req/s: the fit finds both.
  const rng = createRng(11);
  const ms: number[] = [0];
  for (let i = 1; i < 20_000; i++) ms.push((ms[i - 1] as number) + (rng.gamma(0.5) / 0.5 / 10) * 1000);
  const fit = fitArrival(ms, 1);
  assert.equal(fit.arrival.kind, 'gamma');
  if (fit.arrival.kind !== 'gamma') return;
  assert.ok(rel(fit.arrival.rate_rps, 10) < 0.03, String(fit.arrival.rate_rps));
  assert.ok(rel(fit.arrival.burstiness, 0.5) < 0.1, String(fit.arrival.burstiness));
  const fast = fitArrival(ms, 4).arrival;
  assert.ok(fast.kind === 'gamma' && rel(fast.rate_rps, 40) < 0.03 && rel(fast.burstiness, 0.5) < 0.1);
  assert.deepEqual(fitArrival([0, 250, 500, 750], 1).arrival, { kind: 'constant', rate_rps: 4 });
  assert.deepEqual(fitArrival([0, 0, 0], 1).arrival, { kind: 'burst' });
});

test('a derived workload draws what the trace holds: mean lengths and rate within a few percent', () => {
  const t = read('azure-conv-2023-head1500.csv');
  const { workload, summary } = traceWorkload(t, traceName(t), { name: 'conv', speed: 10, embed: false });
  assert.equal(workload.trace?.data, undefined);
  assert.equal(workload.trace?.speed, 10);
  const big = Workload.parse({ ...workload, num_prompts: 30_000 });
  const specs = sampleRequests(big, createRng(5));
  assert.ok(rel(mean(specs.map((s) => s.inputTokens)), summary.meanInputTokens) < 0.04);
  assert.ok(rel(mean(specs.map((s) => s.outputTokens)), summary.meanOutputTokens) < 0.04);
  const times = arrivalTimes(workload.arrival, 1500, createRng(6));
  const spanS = (times?.[1499] ?? 0) - (times?.[0] ?? 0);
  assert.ok(rel(1499 / spanS, 1499 / summary.spanS) < 0.05, `${1499 / spanS} vs ${1499 / summary.spanS}`);
  assert.ok(rel(summary.spanS, 30.95) < 0.01, 'span ÷ speed');
});

test("Mooncake's shared blocks become shared prefixes carrying the trace's shared prompt tokens", () => {
  const t = read('mooncake-conversation-head300.jsonl');
  const { workload, summary } = traceWorkload(t, traceName(t), { name: 'mc', embed: false });
  const sp = workload.shared_prefix;
  assert.ok(sp !== undefined);
  // Every request starts with block 0, which all share.
  assert.equal(sp.fraction, 1);
  assert.ok(summary.sharedTokenFraction > 0.1 && summary.sharedTokenFraction < 0.2, String(summary.sharedTokenFraction));
  assert.ok(rel(sp.length * sp.fraction, summary.sharedTokenFraction * summary.meanInputTokens) < 0.01);
  // Prefix + unique part: the whole prompt's mean.
  const big = Workload.parse({ ...workload, num_prompts: 50_000 });
  const specs = sampleRequests(big, createRng(9));
  assert.ok(rel(mean(specs.map((s) => s.prefixTokens + s.inputTokens)), summary.meanInputTokens) < 0.05);
  assert.ok(meanLength(workload.output_len) > 0);
  // Its longest prompt (prefix + longest unique part) is the trace's longest, not a prefix longer.
  const longest = (xs: readonly number[]): number => xs.reduce((m, x) => Math.max(m, x), 0);
  assert.equal(maxRequestTokens(workload), longest(t.requests.map((r) => r.inputTokens)) + longest(t.requests.map((r) => r.outputTokens)));
});

test('an embedded trace is replayed exactly: its lengths, its times ÷ speed, its block ids, the first num_prompts', () => {
  const t = read('mooncake-conversation-head300.jsonl');
  const { workload } = traceWorkload(t, traceName(t), { name: 'mc', speed: 2, embed: true });
  const w = Workload.parse({ ...workload, num_prompts: 40 });
  const specs = sampleRequests(w, createRng(1));
  assert.equal(specs.length, 40);
  specs.forEach((s, i) => {
    assert.equal(s.inputTokens, t.requests[i]?.inputTokens);
    assert.equal(s.outputTokens, t.requests[i]?.outputTokens);
    assert.equal(s.prefixTokens, 0);
    assert.equal(s.blocks?.tokens, 512);
    assert.equal(s.blocks?.ids.length, t.requests[i]?.hashIds?.length);
  });
  // Dense ids keep the sharing: requests 0 and 1 share block 0 only.
  assert.equal(specs[0]?.blocks?.ids[0], specs[1]?.blocks?.ids[0]);
  assert.notEqual(specs[0]?.blocks?.ids[1], specs[1]?.blocks?.ids[1]);
  const times = workloadArrivals(w, 40, createRng(1));
  assert.equal(times?.[10], 1.5);
  // A result's copy drops the requests and is then sampled from the fit.
  const stub = withoutTraceData(w);
  assert.equal(stub.trace?.sha256, w.trace?.sha256);
  assert.ok(sampleRequests(stub, createRng(1)).every((s) => s.blocks === undefined));
});

test('the Workload schema checks an embedded trace: columns of its length, times that never go back', () => {
  const t = read('azure-code-2023-head300.csv');
  const { workload } = traceWorkload(t, traceName(t), { name: 'az', embed: true });
  const data = workload.trace?.data;
  assert.ok(data !== undefined);
  assert.equal(Workload.safeParse({ ...workload, trace: { ...workload.trace, data: { ...data, output_tokens: data.output_tokens.slice(1) } } }).success, false);
  const back = [...data.arrival_ms];
  back[5] = 0;
  assert.equal(Workload.safeParse({ ...workload, trace: { ...workload.trace, data: { ...data, arrival_ms: back } } }).success, false);
  assert.equal(Workload.safeParse({ ...workload, num_prompts: 301 }).success, false);
  assert.equal(Workload.safeParse(workload).success, true);
});
