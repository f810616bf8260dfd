import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Workload, type Arrival } from '../../src/domain/index.js';
import { arrivalTimes, offeredRate, requestRateField, sampleRequests, withPoolBlocks } from '../../src/workload/sample.js';
import { syntheticRequests } from '../../src/loadgen/prompts.js';
import { scheduleTimes } from '../../src/loadgen/arrivals.js';
import { parseRateStagesFlag } from '../../src/workload/stages-flag.js';
import { createRng } from '../../src/util/rng.js';
import { LmBenchError } from '../../src/errors.js';

const staged = (stages: { rate_rps: number; duration_s: number }[]): Arrival => Workload.parse({ name: 's', input_len: { dist: 'fixed', value: 8 }, output_len: { dist: 'fixed', value: 8 }, arrival: { kind: 'poisson', stages } }).arrival;

test('rate stages: each stage sends round(rate × duration) requests inside its own span, in order', () => {
  const a = staged([{ rate_rps: 8, duration_s: 60 }, { rate_rps: 20, duration_s: 30 }, { rate_rps: 0, duration_s: 10 }, { rate_rps: 2.5, duration_s: 10 }]);
  const n = 480 + 600 + 25;
  const t = arrivalTimes(a, n, createRng(3)) as Float64Array;
  const inSpan = (lo: number, hi: number): number => t.filter((x) => x > lo && x <= hi + 1e-9).length;
  assert.equal(inSpan(0, 60), 480);
  assert.equal(inSpan(60, 90), 600);
  assert.equal(inSpan(90, 100), 0, 'a rate-0 stage is a pause');
  assert.equal(inSpan(100, 110), 25);
  for (let i = 1; i < n; i++) assert.ok((t[i] as number) >= (t[i - 1] as number), `arrival ${i} goes back in time`);
  assert.ok(Math.abs((t[479] as number) - 60) < 1e-9 && Math.abs((t[n - 1] as number) - 110) < 1e-9, 'each stage ends on its last arrival, as a single-rate run ends at N/rate');
  // Poisson within a stage: inter-arrival CV ≈ 1 (evenly spaced would be 0).
  const gaps = Array.from({ length: 599 }, (_, i) => (t[481 + i] as number) - (t[480 + i] as number));
  const m = gaps.reduce((s, g) => s + g, 0) / gaps.length;
  const cv = Math.sqrt(gaps.reduce((s, g) => s + (g - m) ** 2, 0) / gaps.length) / m;
  assert.ok(cv > 0.85 && cv < 1.15, `cv ${cv}`);
  assert.ok(Math.abs(m - 1 / 20) < 0.005, `mean gap ${m}`);
});

test('rate stages: fewer requests end the same schedule early; same seed, same times; the load runner draws the same', () => {
  const a = staged([{ rate_rps: 5, duration_s: 20 }, { rate_rps: 10, duration_s: 10 }]);
  const full = arrivalTimes(a, 200, createRng(9)) as Float64Array;
  const head = arrivalTimes(a, 120, createRng(9)) as Float64Array;
  assert.deepEqual(Array.from(head), Array.from(full.subarray(0, 120)));
  assert.deepEqual(Array.from(scheduleTimes(a, 200, createRng(9)) as Float64Array), Array.from(full));
  assert.notDeepEqual(Array.from(arrivalTimes(a, 200, createRng(10)) as Float64Array), Array.from(full));
  // Asked past the stages, arrivals go on at the last rate instead of piling up at the end.
  const over = arrivalTimes(a, 260, createRng(9)) as Float64Array;
  assert.ok((over[259] as number) > 30 + 2, `last ${over[259]}`);
});

test('--rate-stages R:S,… parses to stages; a malformed one is an argument error naming the stage', () => {
  assert.deepEqual(parseRateStagesFlag('8:600, 20:600'), [{ rate_rps: 8, duration_s: 600 }, { rate_rps: 20, duration_s: 600 }]);
  for (const bad of ['8', '8:0', 'x:5', '8:600,', '-1:5', '0x8:600', '8:1e3x']) {
    assert.throws(() => parseRateStagesFlag(bad), (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_INVALID_ARGUMENT' && /--rate-stages: stage \d/.test(e.message), bad);
  }
});

const pooled = (size: number, extra: Record<string, unknown> = {}): Workload =>
  Workload.parse({
    name: 'p',
    input_len: { dist: 'uniform', min: 40, max: 400 },
    output_len: { dist: 'uniform', min: 1, max: 50 },
    arrival: { kind: 'poisson', rate_rps: 5 },
    num_prompts: 50,
    prompt_pool: { size },
    ...extra,
  });

test('a prompt pool re-sends its N prompts in a cycle: request i is entry i mod N, lengths and all', () => {
  const specs = sampleRequests(pooled(7), createRng(1));
  assert.equal(specs.length, 50);
  for (const s of specs) {
    const first = specs[s.index % 7];
    assert.equal(s.promptId, s.index % 7);
    assert.equal(s.inputTokens, first?.inputTokens);
    assert.equal(s.outputTokens, first?.outputTokens);
  }
  assert.equal(new Set(specs.slice(0, 7).map((s) => s.inputTokens)).size > 1, true, 'the entries differ from one another');
  // The load runner sends the very same text for every re-send, and different text across entries.
  const prompts = syntheticRequests(pooled(7), 4);
  assert.equal(prompts[3]?.prompt, prompts[10]?.prompt);
  assert.equal(prompts[3]?.prompt, prompts[45]?.prompt);
  assert.notEqual(prompts[3]?.prompt, prompts[4]?.prompt);
  // Without a pool every prompt is its own.
  const plain = syntheticRequests({ ...pooled(7), prompt_pool: undefined }, 4);
  assert.equal(new Set(plain.map((p) => p.prompt)).size, 50);
});

test('pool blocks: equal ids exactly where content is equal (a shared prefix across entries, a whole prompt across re-sends)', () => {
  const w = pooled(6, { shared_prefix: { groups: 2, length: 40, fraction: 1 }, input_len: { dist: 'fixed', value: 50 } });
  const specs = withPoolBlocks(sampleRequests(w, createRng(2)), 16);
  for (const s of specs) {
    assert.equal(s.blocks?.tokens, 16);
    assert.equal(s.blocks?.ids.length, Math.floor(90 / 16), 'every full block of the prompt has an id');
  }
  const a = specs[0];
  const again = specs[6];
  assert.deepEqual(again?.blocks?.ids, a?.blocks?.ids, 'a re-send has the same blocks');
  const sameGroup = specs.slice(1, 6).find((s) => s.prefixGroup === a?.prefixGroup);
  const otherGroup = specs.slice(1, 6).find((s) => s.prefixGroup !== a?.prefixGroup);
  assert.ok(sameGroup !== undefined && otherGroup !== undefined, 'both groups occur among 6 entries with this seed');
  // 40 prefix tokens = 2 full 16-token blocks shared within the group; block 2 straddles into the prompt's own tokens.
  assert.deepEqual(sameGroup.blocks?.ids.slice(0, 2), a?.blocks?.ids.slice(0, 2));
  assert.notEqual(sameGroup.blocks?.ids[2], a?.blocks?.ids[2]);
  assert.notEqual(otherGroup.blocks?.ids[0], a?.blocks?.ids[0]);
  const all = new Set(specs.slice(0, 6).flatMap((s) => s.blocks?.ids.slice(2) ?? []));
  assert.equal(all.size, 6 * 3, "blocks past the prefix are each entry's own");
  // Requests without a pool are left as they are.
  const plain = sampleRequests({ ...w, prompt_pool: undefined }, createRng(2));
  assert.deepEqual(withPoolBlocks(plain, 16), plain);
});

test('a result\'s request_rate is the rate the schedule offered the requests it sent, not the stages\' mean', () => {
  const chat = staged([{ rate_rps: 8, duration_s: 600 }, { rate_rps: 20, duration_s: 600 }]);
  assert.equal(requestRateField(chat), 14, 'the arrival names the whole schedule\'s mean');
  assert.equal(offeredRate(chat, 200), 8, '200 requests: all in the 8 req/s stage');
  assert.equal(offeredRate(chat, 16_800), 14, 'the whole schedule: its mean');
  // 4,800 at 8 req/s (600 s), then 1,200 of the 20 req/s stage's 12,000 (60 s).
  assert.equal(offeredRate(chat, 6000), 6000 / 660);
  const paused = staged([{ rate_rps: 0, duration_s: 50 }, { rate_rps: 5, duration_s: 4 }]);
  assert.ok(Math.abs((requestRateField(paused) as number) - 20 / 54) < 1e-12, 'the mean counts the pause');
  assert.equal(offeredRate(paused, 20), 5, 'a leading pause offers nothing');
  const gap = staged([{ rate_rps: 4, duration_s: 10 }, { rate_rps: 0, duration_s: 30 }, { rate_rps: 4, duration_s: 10 }]);
  assert.equal(offeredRate(gap, 80), 4, 'nor does a pause between stages');
  // Without stages the arrival's own rate; closed loops and bursts "inf", as vLLM writes them.
  assert.equal(offeredRate({ kind: 'poisson', rate_rps: 3 }, 7), 3);
  assert.equal(offeredRate({ kind: 'gamma', rate_rps: 3, burstiness: 0.5 }, 7), 3);
  assert.equal(offeredRate({ kind: 'closed', concurrency: 4 }, 7), 'inf');
  assert.equal(offeredRate({ kind: 'burst' }, 7), 'inf');
});
