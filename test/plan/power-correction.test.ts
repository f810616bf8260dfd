import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import { correctedJPerTok, plan } from '../../src/plan/plan.js';
import { simRun } from '../../src/plan/run-plan.js';
import { defaultPowerProfile } from '../../src/sim/power-profile.js';
import { CHAT } from './chat-workload.js';

// The history's speed correction of a plan's power: the energy above idle scales with the server's
// speed, the idle draw does not, and the GPUs never draw more than their TDP.

const catalog = defaultCatalog();

test('correctedJPerTok: idle stays idle, the rest scales by 1/speed, capped at the TDP', () => {
  // 1,000 tok/s at 400 W of which 100 W idle, TDP 700 W.
  assert.equal(correctedJPerTok(400, 1000, 100, 700, 1), 0.4);
  assert.equal(correctedJPerTok(400, 1000, 100, 700, 2), (100 + 300 / 2) / 1000);
  assert.equal(correctedJPerTok(400, 1000, 100, 700, 0.5), 0.7, 'twice as slow: 100 + 600 W, at the 700 W TDP');
  assert.equal(correctedJPerTok(400, 1000, 100, 700, 0.25), 0.7, 'never past the TDP');
  assert.equal(correctedJPerTok(400, 1000, null, 700, 2), 0.2, 'without a power model, the whole scales');
});

test('plan: a server twice as fast as simulated at a light load draws no less than its idle power', () => {
  const chat = CHAT;
  const idleTdpFrac = defaultPowerProfile()?.idle_tdp_frac ?? null;
  assert.ok(idleTdpFrac !== null);
  const a = plan(
    { model: 'llama-3.1-8b', workload: chat, traffic: { kind: 'rate', rate_rps: 1 }, slo: { ttft_p99_ms: 1000, itl_p99_ms: 80 }, gpus: ['H100-SXM'], maxGpus: 1, objective: 'gpus', seed: 1 },
    { catalog, simulate: simRun(catalog), prices: loadPrices(catalog), idleTdpFrac, correction: () => ({ runs: 4, speedFactor: 2, latencyFactor: 1, logSd: 0.05 }) },
  );
  const d = a.deployments[0];
  assert.ok(d?.feasible, d?.reason ?? '');
  const idle = idleTdpFrac * catalog.gpu('H100-SXM').tdp_w;
  // Before: the simulated ~103 W halved, 52 W, under the H100's 98 W idle.
  assert.ok((d.avg_power_w as number) >= idle, `${d.avg_power_w} W against ${idle} W idle`);
  assert.ok(Math.abs((d.avg_power_w as number) / (d.output_throughput_tok_s as number) / (d.energy_per_output_token_j as number) - 1) < 1e-9, 'W = J/token × tok/s');
});
