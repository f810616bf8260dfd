import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, RequestRecord } from '../../src/domain/index.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { captureIo } from '../helpers/cli.js';
import { RunJson } from '../../src/cli/json-output.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';

// The shipped config, shortened (2 input lengths × 2 concurrencies, few short requests), end to end
// through the CLI against the simulated vLLM served over HTTP on loopback.
let sim: SimServer;
let dir: string;
before(async () => {
  sim = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 20, seed: 1 });
  dir = mkdtempSync(join(tmpdir(), 'lmb-e2e-'));
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

function capture(): { io: Parameters<typeof main>[1]; out: () => string; err: () => string } {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  return { io, out: io.out, err: io.err };
}

test('the shipped config (shortened) runs against lm-bench sim serve', async () => {
  const cfg = parse(readFileSync(new URL('../../configs/llama3-8b-throughput.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
  cfg['num_prompts'] = 6;
  cfg['warmup'] = { requests: 1 };
  cfg['dataset'] = { ...(cfg['dataset'] as object), output_len: 16 };
  cfg['sweep'] = { 'dataset.input_len': [128, 2048], 'traffic.concurrency': [1, 4] };
  delete cfg['model']; // read from /v1/models
  writeFileSync(join(dir, 'short.yaml'), stringify(cfg));
  const c = capture();
  const code = await main(['run', '--config', 'short.yaml', '--endpoint', `${sim.url}/v1/completions`, '--output', 'out.json', '--html', 'out.html', '--records', 'rec.jsonl'], c.io);
  assert.equal(code, 0, c.err());
  const results = readFileSync(join(dir, 'out.json'), 'utf8').trim().split('\n').map((l) => BenchmarkResult.parse(JSON.parse(l)));
  assert.equal(results.length, 4);
  assert.deepEqual(results.map((r) => r.max_concurrency), [1, 4, 1, 4]);
  for (const r of results) {
    assert.equal(r.completed, 6);
    assert.equal(r.failed, 0);
    assert.equal(r.total_output_tokens, 6 * 16); // ignore_eos: exactly max_tokens each
    assert.equal(r.model_id, 'meta-llama/Llama-3.1-8B-Instruct');
    assert.ok(r.mean_ttft_ms > 0 && r.mean_tpot_ms > 0);
    assert.ok(r.server_metrics !== null, 'the simulator exposes /metrics');
    assert.equal(r.request_goodput !== null, true); // the config's SLO sets per-request thresholds
  }
  const records = readFileSync(join(dir, 'rec.jsonl'), 'utf8').trim().split('\n').map((l) => RequestRecord.parse(JSON.parse(l)));
  assert.equal(records.filter((r) => r.phase === 'measure').length, 24);
  assert.equal(records.filter((r) => r.phase === 'warmup').length, 4);
  const html = readFileSync(join(dir, 'out.html'), 'utf8');
  assert.match(html, /Output throughput vs concurrency/);
  assert.match(html, /TTFT vs input length/);
  assert.equal((html.match(/<svg/g) ?? []).length >= 6, true);
});

test('flags alone make a quick run; a bad config names its line', async () => {
  const c = capture();
  const code = await main(['run', '--endpoint', `${sim.url}/v1/chat/completions`, '--input-len', '64', '--output-len', '8', '--concurrency', '2', '--num-prompts', '4', '--json'], c.io);
  assert.equal(code, 0, c.err());
  const sent: unknown = JSON.parse(c.out());
  assertMatchesSchema(RunJson, sent, 'run');
  const r = BenchmarkResult.parse(sent);
  assert.equal(r.endpoint_type, 'openai-chat');
  assert.equal(r.completed, 4);
  assert.equal(r.max_concurrency, 2);

  writeFileSync(join(dir, 'bad.yaml'), 'dataset:\n  kind: synthetic\n  input_len: 64\n  output_len: 8\ntraffic:\n  concurency: 4\n');
  const b = capture();
  assert.equal(await main(['run', '--config', 'bad.yaml', '--endpoint', `${sim.url}/v1/completions`], b.io), 2);
  assert.match(b.err(), /LMB_ERR_CONFIG_INVALID/);
  assert.match(b.err(), /bad\.yaml:6: traffic: unknown field\(s\) "concurency"/);

  const n = capture();
  assert.equal(await main(['run', '--endpoint', 'http://192.0.2.1:8000/v1/completions', '--model', 'm'], n.io), 2);
  assert.match(n.err(), /LMB_ERR_ENDPOINT_NOT_LOOPBACK/);
});

test('a prompt pool against sim serve meets the prefix cache as the simulator predicts it', async () => {
  const workload = {
    name: 'pool',
    api: 'completions',
    input_len: { dist: 'fixed', value: 256 },
    output_len: { dist: 'fixed', value: 8 },
    prompt_pool: { size: 3 },
    arrival: { kind: 'closed', concurrency: 1 },
    num_prompts: 12,
    ignore_eos: true,
  };
  writeFileSync(join(dir, 'pool.yaml'), stringify(workload));
  // A server of its own: the earlier runs drew their prompts from the same seeded streams, and their
  // blocks would still be cached (as they would be on vLLM).
  const fresh = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 20, seed: 1 });
  const live = capture();
  try {
    assert.equal(await main(['run', '--workload', 'pool.yaml', '--endpoint', `${fresh.url}/v1/completions`, '--output', 'pool.json'], live.io), 0, live.err());
  } finally {
    await fresh.close();
  }
  const measured = BenchmarkResult.parse(JSON.parse(readFileSync(join(dir, 'pool.json'), 'utf8')));
  const hitRate = measured.server_metrics?.prefix_cache_hit_rate ?? null;
  // 3 distinct prompts, each re-sent 3 more times: 9 of 12 prompts hit all their full blocks (240 of 256 tokens).
  assert.ok(hitRate !== null && hitRate > 0.6 && hitRate < 0.75, `hit rate ${String(hitRate)}`);
  const des = capture();
  assert.equal(await main(['sim', 'run', '--workload', 'pool.yaml', '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--json'], des.io), 0, des.err());
  const predicted = BenchmarkResult.parse(JSON.parse(des.out())).server_metrics?.prefix_cache_hit_rate ?? null;
  assert.ok(predicted !== null && Math.abs(predicted - hitRate) < 0.02, `simulated ${String(predicted)} vs served ${hitRate}`);
});

test('each run sends words of its own: a warm-up or an earlier run of the same seed leaves nothing in the prefix cache', async () => {
  // A server of its own with prefix caching on (vLLM's default): the earlier tests' prompts are not in it.
  const fresh = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 20, seed: 1 });
  const args = ['run', '--endpoint', `${fresh.url}/v1/completions`, '--input-len', '256', '--output-len', '4', '--concurrency', '1', '--num-prompts', '8', '--seed', '3', '--json'];
  const runOnce = async (extra: string[]): Promise<BenchmarkResult> => {
    const c = capture();
    assert.equal(await main([...args, ...extra], c.io), 0, c.err());
    return BenchmarkResult.parse(JSON.parse(c.out()));
  };
  try {
    const first = await runOnce(['--warmup', '4']);
    const second = await runOnce([]);
    for (const r of [first, second]) {
      assert.match(r.lmb.prompt_salt ?? '', /^[0-9a-f]{8}$/);
      const hit = r.server_metrics?.prefix_cache_hit_rate ?? null;
      assert.ok(hit !== null && hit < 0.05, `hit rate ${String(hit)}: nothing served from the warm-up's or the first run's prompts`);
    }
    assert.notEqual(first.lmb.prompt_salt, second.lmb.prompt_salt);
    // The same salt again sends the same words, and the cache serves them: the trap the fresh salt avoids.
    const salted = await runOnce(['--prompt-salt', 'again']);
    const repeat = await runOnce(['--prompt-salt', 'again']);
    assert.equal(repeat.lmb.prompt_salt, 'again');
    assert.ok((salted.server_metrics?.prefix_cache_hit_rate ?? 1) < 0.05);
    const hit = repeat.server_metrics?.prefix_cache_hit_rate ?? null;
    assert.ok(hit !== null && hit > 0.8, `a repeated salt is served from the cache: hit rate ${String(hit)}`);
    // No TTFT comparison: at this speed-up a 256-token prefill is a fraction of the loopback round trip.
  } finally {
    await fresh.close();
  }
  const bad = capture();
  assert.equal(await main([...args.slice(0, 3), '--prompt-salt', 'a b'], bad.io), 2);
  assert.match(bad.err(), /LMB_ERR_INVALID_ARGUMENT/);
  assert.match(bad.err(), /--prompt-salt must be 1–56 letters/);
});
