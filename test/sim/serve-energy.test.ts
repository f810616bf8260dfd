import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimServer } from '../../src/sim/index.js';
import { catalog } from './helpers.js';

const series = (text: string, name: string): number[] => [...text.matchAll(new RegExp(`^${name}\\{gpu="(\\d+)"[^}]*\\} (\\S+)$`, 'gm'))].map((m) => Number(m[2]));

test('sim serve shows each GPU’s power and energy on /metrics (dcgm-exporter names) and the load window’s energy', async () => {
  const server = await startSimServer({ config: { tensor_parallel_size: 2 }, hardware: { gpu: 'H100-SXM', count: 2 }, model: 'qwen3-8b', port: 0, speed: 50, seed: 1, catalog });
  try {
    const idle = await (await fetch(`${server.url}/metrics`)).text();
    assert.equal(series(idle, 'DCGM_FI_DEV_POWER_USAGE').length, 2, 'one series per GPU');
    const energy = server.engine.energy ?? assert.fail('a power model');
    assert.equal(energy.loadWindow().avg_power_w, null, 'nothing served yet');
    const body = JSON.stringify({ prompt: 'one two three four', max_tokens: 64, ignore_eos: true });
    await Promise.all(Array.from({ length: 6 }, async () => (await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text()));
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const power = series(text, 'DCGM_FI_DEV_POWER_USAGE');
    const joules = series(text, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION').map((mj) => mj / 1000);
    assert.equal(power.length, 2);
    for (const w of power) assert.ok(w >= 0.1 * 700 && w <= 700, `${w} W`);
    // Energy since start: at least idle all along, and more than idle once steps ran.
    const t = server.engine.nowS();
    for (const j of joules) assert.ok(j > 0.14 * 700 * 0.5 * t && j < 700 * t, `${j} J after ${t} s`);
    assert.ok((joules[0] ?? 0) > (series(idle, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION')[0] ?? Infinity) / 1000);
    const e = energy.loadWindow();
    assert.equal(e.window?.rule, 'load');
    assert.equal(e.gpus, 2);
    assert.ok((e.avg_power_w ?? 0) > 2 * 0.14 * 700 * 0.99 && (e.avg_power_w ?? Infinity) <= 2 * 700);
    assert.ok(Math.abs((e.energy_per_output_token_j ?? 0) * 6 * 64 - (e.energy_j ?? NaN)) < 1e-6 * (e.energy_j ?? 1), 'J/token × the 384 tokens = the energy');
  } finally {
    await server.close();
  }
});

test('sim serve on more GPUs than its replicas use shows the idle ones too, at idle power, as sim run counts them', async () => {
  const server = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 4 }, model: 'qwen3-8b', port: 0, speed: 50, seed: 1, catalog });
  try {
    const body = JSON.stringify({ prompt: 'one two three four', max_tokens: 32, ignore_eos: true });
    await Promise.all(Array.from({ length: 4 }, async () => (await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text()));
    const power = series(await (await fetch(`${server.url}/metrics`)).text(), 'DCGM_FI_DEV_POWER_USAGE');
    assert.equal(power.length, 4, 'one series per GPU of the deployment');
    // The three the one replica leaves alone draw the same idle power; the working one draws at least that.
    const idle = power.slice(1);
    assert.ok(idle.every((w) => w === idle[0]) && (power[0] ?? 0) >= (idle[0] ?? Infinity), power.join(', '));
    assert.equal((server.engine.energy ?? assert.fail('a power model')).loadWindow().gpus, 4);
  } finally {
    await server.close();
  }
});
