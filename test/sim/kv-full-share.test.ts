import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../../src/sim/index.js';
import { Replica } from '../../src/sim/scheduler.js';
import { KV_FULL } from '../../src/diagnose/evidence.js';
import { catalog, fixed } from './helpers.js';

// The simulated evidence's KV cache is the cache at each step's fullest: a step that preempted found it
// full, whatever its victims freed before the step ended. Read after the step, a run of long prompts
// that preempted (each victim freeing a large share) put its peak below the result's and counted the
// preempting steps as not full.

interface PreemptingStep {
  readonly seconds: number;
  /** KV usage once the step freed its victims (vLLM's gauge), and at the step's fullest. */
  readonly after: number;
  readonly fullest: number;
}

/** The steps that preempted, over every replica of the runs inside `f`. */
function preemptingSteps(f: () => void): PreemptingStep[] {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, and called with its replica
  const step = Replica.prototype.step;
  const seen: PreemptingStep[] = [];
  Replica.prototype.step = function (this: Replica, nowS: number): number {
    const before = this.preemptions;
    const d = step.call(this, nowS);
    if (this.preemptions > before) seen.push({ seconds: d, after: this.kv.usage, fullest: this.kvStepUsage });
    return d;
  };
  try {
    f();
  } finally {
    Replica.prototype.step = step;
  }
  return seen;
}

test('a run that preempts: its evidence counts every preempting step as KV-full, though its victims freed blocks', () => {
  let out: ReturnType<typeof simulate> | undefined;
  // 20,000-token prompts on one H100: a victim frees ~5% of the cache.
  const steps = preemptingSteps(() => {
    out = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: fixed(20_000, 100, { kind: 'burst' }, 200), seed: 1, catalog, runtimeFailures: false });
  });
  assert.ok(out?.ok);
  const r = out.result;
  const e = r.evidence?.server;
  assert.ok(e !== null && e !== undefined);
  assert.ok(steps.length > 0);
  assert.equal(e.preemptions, r.server_metrics?.num_preemptions);
  // What a gauge read after the step misses: the victims' blocks are back, under 95%.
  assert.ok(steps.some((s) => s.after < KV_FULL), 'some preempting step ends under 95%');
  // At its fullest, each preempting step had the cache full.
  for (const s of steps) assert.ok(s.fullest >= KV_FULL && s.fullest >= s.after, `fullest ${s.fullest}, after ${s.after}`);
  // Every second of a preempting step counts as KV-full (a burst: the run's span is its duration).
  const inSteps = steps.reduce((sum, s) => sum + s.seconds, 0);
  assert.ok((e.kv_full_share ?? 0) * r.duration >= inSteps * (1 - 1e-9), `${e.kv_full_share} × ${r.duration} s < ${inSteps} s`);
  assert.equal(e.kv_usage_peak, r.server_metrics?.kv_cache_usage_peak);
});

test('a run whose cache never fills reads no KV-full time', () => {
  const out = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.2-1b', workload: fixed(200, 50, { kind: 'closed', concurrency: 4 }, 40), seed: 1, catalog, runtimeFailures: false });
  assert.ok(out.ok);
  const e = out.result.evidence?.server;
  assert.equal(e?.preemptions, 0);
  assert.equal(e?.kv_full_share, 0);
  assert.ok((e?.kv_usage_peak ?? 1) < KV_FULL);
});
