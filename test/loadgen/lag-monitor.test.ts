import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLagMonitor, tailPercentile } from '../../src/loadgen/clock.js';

test('the lag p99 of a short run is its second-worst sample, so one pause does not make it', async () => {
  assert.equal(tailPercentile(200), 99);
  assert.equal(tailPercentile(5000), 99);
  assert.ok(Math.ceil((tailPercentile(100) / 100) * 100) === 99);
  assert.ok(Math.ceil((tailPercentile(40) / 100) * 40) === 39);
  assert.equal(tailPercentile(2), 50);
  const lag = startLagMonitor(10);
  await sleep(150);
  // One 400 ms pause of the event loop, as a GC or a busy neighbour would cause.
  const until = performance.now() + 400;
  while (performance.now() < until);
  await sleep(150);
  lag.stop();
  assert.ok(lag.maxMs() >= 350, `max ${lag.maxMs()}`);
  assert.ok(lag.p99Ms() < lag.maxMs() / 2, `p99 ${lag.p99Ms()} of max ${lag.maxMs()}`);
});
