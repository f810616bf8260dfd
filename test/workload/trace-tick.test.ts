import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { Workload } from '../../src/domain/index.js';
import { createRng } from '../../src/util/rng.js';
import { clockTickMs } from '../../src/util/clock-tick.js';
import { workloadArrivals } from '../../src/workload/sample.js';
import { captureIo } from '../helpers/cli.js';

/** Poisson arrivals at `rate` req/s: exact seconds, and cut to whole seconds as BurstGPT writes them. */
function poissonSeconds(rate: number, n: number, seed: number): number[] {
  const rng = createRng(seed);
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += rng.gamma(1) / rate;
    out.push(t);
  }
  return out;
}

function traceWorkloadOf(arrivalMs: readonly number[], n = arrivalMs.length, format = 'burstgpt'): Workload {
  return Workload.parse({
    name: 't',
    input_len: { dist: 'fixed', value: 10 },
    output_len: { dist: 'fixed', value: 5 },
    arrival: { kind: 'poisson', rate_rps: 1 },
    num_prompts: n,
    trace: {
      source: 't.csv',
      format,
      sha256: '0'.repeat(64),
      requests: arrivalMs.length,
      speed: 2,
      data: { arrival_ms: arrivalMs, input_tokens: arrivalMs.map(() => 10), output_tokens: arrivalMs.map(() => 5) },
    },
  });
}

const cvOf = (t: Float64Array): number => {
  const gaps = Array.from({ length: t.length - 1 }, (_, i) => (t[i + 1] as number) - (t[i] as number));
  const m = gaps.reduce((s, g) => s + g, 0) / gaps.length;
  return Math.sqrt(gaps.reduce((s, g) => s + (g - m) ** 2, 0) / gaps.length) / m;
};

test('a whole-second trace is replayed with each request spread over its second, not all at its first instant', () => {
  const ms = poissonSeconds(6, 4000, 3).map((s) => Math.floor(s) * 1000);
  const first = ms[0] as number;
  const rel = ms.map((x) => x - first);
  assert.equal(clockTickMs(rel), 1000);
  const w = traceWorkloadOf(rel);
  const t = workloadArrivals(w, 4000, createRng(1)) as Float64Array;
  // Each second of the trace keeps its requests (÷ speed 2: half-second slots), in time order.
  for (let i = 0; i < t.length; i++) {
    if (i > 0) assert.ok((t[i] as number) >= (t[i - 1] as number));
  }
  const perSlot = (xs: readonly number[]): number[] => {
    const c = new Map<number, number>();
    for (const x of xs) c.set(Math.floor(x), (c.get(Math.floor(x)) ?? 0) + 1);
    return [...c.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => k * 1000 + v);
  };
  assert.deepEqual(perSlot(Array.from(t, (x) => x * 2)), perSlot(rel.map((x) => x / 1000)));
  // Poisson again: as written, ties made the gaps' CV 2.3 at 6 req/s.
  assert.ok(Math.abs(cvOf(t) - 1) < 0.08, `CV ${cvOf(t)}`);
  // Seeded, and a shorter run is the start of the same schedule.
  assert.deepEqual(Array.from(workloadArrivals(traceWorkloadOf(rel, 100), 100, createRng(1)) as Float64Array), Array.from(t.subarray(0, 100)));
});

test("a trace of ms or finer, or in lm-bench's own JSONL, is replayed at exactly its times", () => {
  const seconds = [0, 0, 1000, 3000, 3000];
  assert.deepEqual(Array.from(workloadArrivals(traceWorkloadOf(seconds, 5, 'jsonl'), 5, createRng(1)) as Float64Array), seconds.map((x) => x / 1000 / 2));
  const ms = [0, 0, 3, 1001.5, 2000];
  assert.equal(clockTickMs(ms), null);
  assert.deepEqual(Array.from(workloadArrivals(traceWorkloadOf(ms), 5, createRng(1)) as Float64Array), ms.map((x) => x / 1000 / 2));
  assert.equal(clockTickMs([0, 7, 19]), null);
});

test('sim run --trace: a BurstGPT file in whole seconds gives the TTFT of the same arrivals written exactly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tick-'));
  try {
    const secs = poissonSeconds(6, 1500, 5);
    const rng = createRng(6);
    const rows = secs.map((s) => {
      const inp = 500 + rng.int(2500);
      const out = 50 + rng.int(250);
      return { s, inp, out };
    });
    const head = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';
    const write = (name: string, time: (s: number) => string): void =>
      writeFileSync(join(dir, name), [head, ...rows.map((r) => `${time(r.s)},ChatGPT,${r.inp},${r.out},${r.inp + r.out},Conversation log`)].join('\n'));
    write('whole.csv', (s) => String(Math.floor(s)));
    write('exact.csv', (s) => s.toFixed(4));
    const ttft = async (file: string): Promise<number> => {
      const io = captureIo(dir);
      assert.equal(await main(['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--seed', '1', '--trace', file, '--json'], io), 0, io.err());
      return (JSON.parse(io.out()) as { mean_ttft_ms: number }).mean_ttft_ms;
    };
    const [whole, exact] = [await ttft('whole.csv'), await ttft('exact.csv')];
    // Sent at the first instant of each second, the whole-second trace's mean TTFT was 3× the exact one's.
    assert.ok(Math.abs(whole / exact - 1) < 0.15, `whole-second ${whole.toFixed(1)} ms vs exact ${exact.toFixed(1)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
