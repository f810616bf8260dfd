// lmb-test: timing
// The SLO-holding control loop and the max-rate bisection against sim serve at 5× real time: whether
// the walk leaves the ramp, comes down when the window's p95 is over the aim and settles within 45 s
// depends on the machine keeping up with real time, so these run in the timing lane (scripts/run-tests.mjs).
// The held percentile itself is tested without a clock in slo-hold.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';
import type { Workload } from '../../src/domain/index.js';
import { runSloHold, type RatePoint } from '../../src/loadgen/slo-hold.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';

let sim: SimServer;
before(async () => {
  // 5× real time: the server's latency grows with load as a real one's does, five times faster.
  sim = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 5, seed: 2, runtimeFailures: false });
});
after(() => sim.close());

const workload: Workload = {
  name: 'hold-test', api: 'completions',
  input_len: { dist: 'lognormal', mean: 1024, std: 512, min: 64, max: 4096 },
  output_len: { dist: 'fixed', value: 32 },
  arrival: { kind: 'poisson', rate_rps: 1 }, num_prompts: 300, ignore_eos: true,
};

test('slo-hold against sim serve ramps, finds where TTFT p95 meets its limit, and says whether it settled', { timeout: 90_000 }, async () => {
  const out = await runSloHold({ endpoint: `${sim.url}/v1/completions`, workload, seed: 1, control: { key: 'ttft_p95_ms', limitMs: 120 }, durationS: 45, windowS: 6, periodS: 1, startRps: 4, env: { LMB_LOOPBACK_ONLY: '1' } });
  const tl = out.rate_timeline;
  assert.ok(tl.length >= 10);
  assert.equal(tl[0]?.phase, 'ramp');
  assert.ok(Math.max(...tl.map((p) => p.offered_rps)) >= 16, 'the ramp went up');
  assert.ok(tl.some((p) => p.phase !== 'ramp'), 'it left the ramp when latency rose');
  // Whenever the window's p95 went over the aim (the limit less the 10% margin), the next period was
  // offered less. (Whether the walk ever goes past the limit itself depends on the machine's noise.)
  const aimMs = 120 * 0.9;
  const shown = tl.map((p) => `${p.t_s.toFixed(0)}s ${p.offered_rps.toFixed(1)}rps ${p.value_ms?.toFixed(0) ?? '-'}ms ${p.phase}`).join('; ');
  for (let i = 0; i + 1 < tl.length; i++) {
    const [p, next] = [tl[i], tl[i + 1]] as [RatePoint, RatePoint];
    // (Or held, in a period the controller did not judge: a backlog draining, or nothing new to read.)
    if ((p.value_ms ?? 0) > aimMs && p.reading === 'judged') assert.ok(next.offered_rps < p.offered_rps, `over the aim at ${p.t_s.toFixed(1)} s but the rate did not come down: ${shown}`);
  }
  assert.ok(tl.some((p) => (p.value_ms ?? 0) > aimMs && p.reading === 'judged'), `the latency never reached the aim in a judged period: ${shown}`);
  if (out.reliable) {
    assert.ok(out.max_sustainable_rps !== null && out.max_sustainable_rps > 0);
    assert.ok(out.settled_at_s !== null && out.settled_at_s <= 45);
    assert.ok(out.result.p95_ttft_ms <= 120 * 1.25, `the settled window's p95 TTFT ${out.result.p95_ttft_ms}`);
  } else {
    assert.equal(out.max_sustainable_rps, null);
    assert.ok(out.unreliable_reasons.length > 0);
  }
  assert.equal(out.result.failed, 0);
});

test('run --mode max-rate: the bisection with every probe, and an answer no higher than the saturated throughput', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-max-rate-'));
  const file = join(dir, 'w.yaml');
  writeFileSync(file, stringify({ ...workload, num_prompts: 120 }));
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--endpoint', `${sim.url}/v1/completions`, '--workload', file, '--mode', 'max-rate', '--slo', 'ttft_p95_ms=120', '--json'], io);
  assert.equal(code, 0, io.err());
  const out = JSON.parse(io.out()) as { mode: string; max_rate_rps: number; reliable: boolean; probes: { rate_rps: number | 'inf'; meets_slo: boolean; request_throughput: number; diagnosis: { bottleneck: string; saturated: boolean } | null }[] };
  assert.equal(out.mode, 'max-rate');
  assert.equal(out.reliable, true);
  assert.ok(out.probes.length >= 2 && out.probes.length <= 5);
  assert.equal(out.probes[0]?.rate_rps, 'inf');
  const saturated = out.probes[0]?.request_throughput ?? 0;
  assert.ok(out.max_rate_rps > 0 && out.max_rate_rps <= saturated + 1e-9);
  // The answer is a probed rate that met the SLOs, and every faster probe that was tried missed.
  assert.ok(out.probes.some((p) => p.rate_rps === out.max_rate_rps && p.meets_slo));
  for (const p of out.probes) if (typeof p.rate_rps === 'number' && p.rate_rps > out.max_rate_rps) assert.equal(p.meets_slo, false);
  // Every probe says what limited it: the all-at-once probe missed, so it names a bottleneck; a probe that met the SLOs without a queue names none.
  assert.ok(out.probes.every((p) => p.diagnosis !== null));
  assert.notEqual(out.probes[0]?.diagnosis?.bottleneck, 'none');
  for (const p of out.probes) if (p.meets_slo && p.diagnosis?.saturated === false) assert.ok(['none', 'client'].includes(p.diagnosis.bottleneck), p.diagnosis.bottleneck);
});
