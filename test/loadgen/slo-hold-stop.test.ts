import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestRecord, Workload } from '../../src/domain/index.js';
import { LmBenchError } from '../../src/errors.js';
import { runSloHold, type SloHoldOutcome } from '../../src/loadgen/slo-hold.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// runSloHold stopped by its signal part-way: `onStopped` gets what was measured before it throws
// LMB_ERR_INTERRUPTED, and the requests the stop cut short are on record but not counted as the server's failures.

/** Short prompts and answers: each request is a few chunks of the stand-in's. */
const workloadOf = (): Workload => ({
  name: 'hold-stop', api: 'completions',
  input_len: { dist: 'fixed', value: 8 },
  output_len: { dist: 'fixed', value: 3 },
  arrival: { kind: 'poisson', rate_rps: 1 }, num_prompts: 50, ignore_eos: true,
});
const base = { model: 'stand-in', seed: 1, control: { key: 'ttft_p95_ms' as const, limitMs: 500 }, durationS: 30, windowS: 1, startRps: 10, timeoutMs: 10_000, env: { LMB_LOOPBACK_ONLY: '1' } };

test('runSloHold aborted part-way hands onStopped the requests sent, then throws LMB_ERR_INTERRUPTED', { timeout: 60_000 }, async () => {
  const ac = new AbortController();
  let served = 0;
  // 10 answers, then the 11th is held open (never answered) and the run stopped while it waits.
  const s = await completionsStandIn((res, max) => {
    if (max <= 1) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
    if (++served <= 10) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
    if (served === 11) setTimeout(() => ac.abort(), 50);
  });
  let kept: (SloHoldOutcome & { records: RequestRecord[] }) | null = null;
  try {
    await assert.rejects(
      runSloHold({ ...base, endpoint: s.url, workload: workloadOf(), signal: ac.signal, onStopped: (m) => void (kept = m) }),
      (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_INTERRUPTED',
    );
  } finally {
    await s.close();
  }
  const m = kept as (SloHoldOutcome & { records: RequestRecord[] }) | null;
  assert.ok(m !== null, 'onStopped was called');
  assert.equal(m.reliable, false);
  assert.equal(m.max_sustainable_rps, null);
  assert.match(m.unreliable_reasons[0] ?? '', /^the run stopped at \d+ s: the run was aborted$/);
  assert.equal(m.records.filter((r) => r.error_kind === null).length, 10);
  assert.ok(m.records.some((r) => r.error_kind === 'aborted'), 'the held request is on record, cut short by the stop');
  assert.equal(m.result.failed, 0, 'a request the stop cut short is not a failure of the server');
});

test('runSloHold aborted before it sent anything throws without calling onStopped', { timeout: 60_000 }, async () => {
  const ac = new AbortController();
  ac.abort();
  let sent = 0;
  const s = await completionsStandIn((res, max) => {
    if (max > 1) sent++;
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
  });
  let called = false;
  try {
    await assert.rejects(
      runSloHold({ ...base, endpoint: s.url, workload: workloadOf(), signal: ac.signal, onStopped: () => void (called = true) }),
      (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_INTERRUPTED',
    );
  } finally {
    await s.close();
  }
  assert.equal(sent, 0);
  assert.equal(called, false);
});
