import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Workload } from '../../src/domain/index.js';
import { readTraceFile, traceName, traceWorkload, type ParsedTrace } from '../../src/trace/index.js';
import { run } from './helpers.js';

const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const read = (name: string): ParsedTrace => readTraceFile(`${dir}${name}`, name);
const rel = (a: number, b: number): number => Math.abs(a - b) / b;

test("the simulator replays a trace: each request its own lengths and time; the result names the trace, not its requests", () => {
  const t = read('azure-code-2023-head300.csv');
  const { workload } = traceWorkload(t, traceName(t), { name: 'az', embed: true });
  const w = Workload.parse({ ...workload, num_prompts: 60 });
  const out = run('H100-SXM', 1, 'llama-3.2-1b', {}, w);
  assert.equal(out.records.length, 60);
  out.records.forEach((r, i) => {
    assert.equal(r.prompt_tokens, t.requests[i]?.inputTokens, `request ${i}`);
    assert.equal(r.output_tokens, t.requests[i]?.outputTokens, `request ${i}`);
    assert.ok(Math.abs(r.sched_time_s - (t.requests[i]?.arrivalMs ?? 0) / 1000) < 1e-9);
  });
  assert.equal(out.result.workload?.trace?.data, undefined);
  assert.equal(out.result.workload?.trace?.sha256, t.sha256);
});

test("Mooncake's shared blocks hit the simulated prefix cache; without the ids, or without caching, nothing hits", () => {
  const t = read('mooncake-conversation-head300.jsonl');
  const { workload } = traceWorkload(t, traceName(t), { name: 'mc', embed: true, speed: 0.25 });
  const w = Workload.parse({ ...workload, num_prompts: 80 });
  const hit = (wl: Workload, caching: boolean): number | null =>
    run('H100-SXM', 1, 'llama-3.2-1b', { enable_prefix_caching: caching, max_model_len: 131072 }, wl).result.server_metrics?.prefix_cache_hit_rate ?? null;
  const shared = hit(w, true);
  assert.ok(shared !== null && shared > 0.03, `hit rate ${shared}`);
  // The ids are what shares: the same requests with every block its own miss.
  const data = w.trace?.data;
  assert.ok(data?.hash_ids !== undefined);
  let next = 1_000_000;
  const unique = { ...w, trace: { ...w.trace, data: { ...data, hash_ids: data.hash_ids.map((ids) => ids.map(() => next++)) } } } as Workload;
  assert.equal(hit(unique, true), 0);
  assert.equal(hit(w, false), null);
});

test('the derived workload, simulated, lands near the trace it came from (mean TTFT, output throughput)', () => {
  // The benchmark's case (bench/trace-replay.ts): Azure conversations at ~48 req/s on a 1B model.
  const t = read('azure-conv-2023-head1500.csv');
  const replay = traceWorkload(t, traceName(t), { name: 'conv', speed: 10, embed: true }).workload;
  const derived = traceWorkload(t, traceName(t), { name: 'conv', speed: 10, embed: false }).workload;
  const a = run('H100-SXM', 1, 'llama-3.2-1b', {}, replay).result;
  const b = run('H100-SXM', 1, 'llama-3.2-1b', {}, derived).result;
  assert.equal(a.completed, 1500);
  assert.ok(rel(b.output_throughput, a.output_throughput) < 0.05, `throughput ${b.output_throughput} vs ${a.output_throughput}`);
  assert.ok(rel(b.request_throughput, a.request_throughput) < 0.05);
  assert.ok(rel(b.mean_ttft_ms, a.mean_ttft_ms) < 0.15, `TTFT ${b.mean_ttft_ms} vs ${a.mean_ttft_ms}`);
});
