import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import type { Energy } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';

const args = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '2', '--model', 'qwen3-8b', '--tensor-parallel-size', '2', '--seed', '1', '--input-len', '256', '--output-len', '128', '--concurrency', '16', '--num-prompts', '96'];

test('sim run --json: an energy block over the steady-state window, its figures consistent', async () => {
  const io = captureIo();
  assert.equal(await main([...args, '--json'], io), 0, io.err());
  const r = JSON.parse(io.out()) as { energy: Energy; total_output_tokens: number; duration: number };
  const e = r.energy;
  assert.equal(e.source, 'sim');
  assert.equal(e.gpus, 2);
  assert.equal(e.window?.rule, 'steady-state');
  const w = e.window ?? assert.fail('a window');
  const p = e.avg_power_w ?? assert.fail('a power');
  const j = e.energy_j ?? assert.fail('an energy');
  const perToken = e.energy_per_output_token_j ?? assert.fail('J/token');
  assert.ok(Math.abs(j - p * (w.end_s - w.start_s)) < 1e-6 * j, 'energy_j = avg_power_w × the window');
  const windowTokens = j / perToken;
  assert.ok(windowTokens > 0.3 * r.total_output_tokens && windowTokens < r.total_output_tokens, `${windowTokens} of ${r.total_output_tokens} tokens in the window`);
  assert.ok(Math.abs((e.output_tokens_per_joule ?? 0) * perToken - 1) < 1e-12);
  assert.ok(p > 2 * 0.1 * 700 && p <= 2 * 700, `${p} W on 2 H100s`);
  assert.ok(w.start_s > 0 && w.end_s < r.duration + w.start_s);
});

test('sim run prints one energy line: average power, energy, J/token, tokens/J and the window rule', async () => {
  const io = captureIo();
  assert.equal(await main(args, io), 0, io.err());
  const lines = io.out().split('\n').filter((l) => l.startsWith('Energy:'));
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? '', /^Energy: \d+\.\d W average \(2 GPUs\), \d+ J, \d\.\d{4} J\/token, \d+\.\d\d tokens\/J over \d+\.\d–\d+\.\d s \(ML\.ENERGY's steady-state window: /);
  // Too few requests for a steady state: the load window, and it says so.
  const few = captureIo();
  assert.equal(await main(['sim', 'run', '--gpu', 'H100-SXM', '--model', 'qwen3-8b', '--input-len', '64', '--output-len', '32', '--num-prompts', '3'], few), 0, few.err());
  assert.match(few.out(), /^Energy: .* \(load window: first request sent to last token\)$/m);
});
