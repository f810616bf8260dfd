import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { resolveConfig, startupPhases, startupTimeS } from '../../src/physics/index.js';
import type { RuntimeFailure } from '../../src/physics/index.js';
import { startSimServer } from '../../src/sim/index.js';
import { catalog } from './helpers.js';

const h100 = catalog.gpu('H100-SXM');

test('start-up time grows with the weights per GPU and with torch.compile and CUDA-graph capture', () => {
  const t = (model: string, config: Parameters<typeof resolveConfig>[0]) => startupTimeS(resolveConfig(config, h100, catalog.model(model)), h100, catalog.model(model));
  const small = t('llama-3.1-8b', {});
  const big = t('llama-3.1-70b', { tensor_parallel_size: 4 });
  const bigTp8 = t('llama-3.1-70b', { tensor_parallel_size: 8 });
  const eager = t('llama-3.1-8b', { enforce_eager: true });
  assert.ok(small > 20 && small < 120, `8B starts in tens of seconds: ${small}`);
  assert.ok(big > small, `70B TP4 ${big} s after 8B ${small} s`);
  assert.ok(bigTp8 < big, 'more GPUs load the weights in parallel');
  assert.ok(small - eager > 20, `eager skips compile and capture: ${eager} vs ${small}`);
  const phases = startupPhases(resolveConfig({}, h100, catalog.model('llama-3.1-8b')), h100, catalog.model('llama-3.1-8b')).map((p) => p.phase);
  assert.deepEqual(phases, ['init', 'load_weights', 'profile', 'torch_compile', 'cudagraph_capture']);
});

/** One GET with a short timeout: the status, or null when nothing answered in time. */
async function probe(url: string, timeoutMs = 150): Promise<number | null> {
  try {
    // undici's own timeouts tick at a coarse resolution; an abort signal is exact.
    const res = await request(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return res.statusCode;
  } catch {
    return null;
  }
}

test('sim serve binds at once but answers nothing, /health included, until its start-up has passed', async () => {
  const lines: string[] = [];
  // 8B on H100 ≈ 45 s simulated; × 0.02 ÷ speed 2 ≈ 0.45 s of real time.
  const t0 = performance.now();
  const server = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 2, startupScale: 0.02, catalog, log: (l) => lines.push(l) });
  try {
    const expectedMs = (server.startupTimeS * 0.02 * 1000) / 2;
    assert.equal(await probe(`${server.url}/health`), null, 'no answer while starting');
    await server.ready;
    assert.ok(performance.now() - t0 >= expectedMs - 20, `ready after ${performance.now() - t0} ms, start-up ${expectedMs} ms`);
    assert.equal(await probe(`${server.url}/health`, 2000), 200);
    assert.ok(lines.some((l) => /Loading weights took [\d.]+ s/.test(l)));
    assert.equal(lines.at(-1), 'INFO: Application startup complete.');
  } finally {
    await server.close();
  }
});

/** Tiny requests, 8 at a time, until the server stops answering; the number answered. */
async function untilCrash(seed: number): Promise<{ answered: number; failure: RuntimeFailure | null; log: string[] }> {
  const seen: { failure: RuntimeFailure | null } = { failure: null };
  const log: string[] = [];
  const server = await startSimServer({
    config: { gpu_memory_utilization: 0.98 },
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    port: 0,
    speed: 1e4,
    seed,
    catalog,
    log: (l) => log.push(l),
    onCrash: (f) => (seen.failure = f),
  });
  let answered = 0;
  try {
    const one = async (): Promise<boolean> => {
      try {
        const res = await request(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', max_tokens: 1 }), headersTimeout: 5000 });
        await res.body.dump();
        return res.statusCode === 200;
      } catch {
        return false;
      }
    };
    for (let round = 0; round < 400 && seen.failure === null; round++) {
      const ok = await Promise.all(Array.from({ length: 8 }, one));
      answered += ok.filter(Boolean).length;
    }
    return { answered, failure: seen.failure, log };
  } finally {
    await server.close();
  }
}

test('at gpu_memory_utilization 0.98 the server dies of a run-time OOM under load, at the same request for the same seed', async () => {
  const a = await untilCrash(7);
  const f = a.failure;
  assert.ok(f !== null, `crashed after ${a.answered} answers`);
  assert.equal(f.rule, 'R1');
  assert.match(f.message, /CUDA out of memory/);
  assert.ok(a.log.some((l) => /EngineDeadError/.test(l)), 'logs as vLLM does when its engine core dies');
  const b = await untilCrash(7);
  assert.equal(b.failure?.atRequest, f.atRequest, 'the same seed crashes at the same request');
});
