import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import { goodputOutputTokS, resultCost } from '../../src/cost/result-cost.js';
import type { BenchmarkResult } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();

test('data/prices.yaml prices every NVIDIA GPU of the catalog, each with a source and a date', () => {
  const prices = loadPrices(catalog);
  for (const hw of catalog.gpus.filter((g) => g.vendor === 'nvidia')) {
    const p = prices.of(hw);
    assert.ok(p !== null && p.usdPerGpuHour > 0, `${hw.id} has a price`);
    assert.match(p.source, /^data\/prices\.yaml: .+\d{4}-\d{2}-\d{2}/);
    const dates = p.source.match(/\d{4}-\d{2}-\d{2}/g) ?? [];
    assert.equal(new Set(dates).size, dates.length, `${hw.id}: each date once: ${p.source}`);
  }
});

test('--prices overrides the GPUs it names and keeps the others; a datasheet price wins over both', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-prices-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'mine.yaml');
  writeFileSync(file, 'currency: USD\nprices:\n  - gpu: h100\n    usd_per_gpu_hour: 1.5\n    source: our reserved contract\n    date: 2026-11-01\n');
  const prices = loadPrices(catalog, file);
  const h100 = catalog.gpu('H100-SXM');
  assert.equal(prices.of(h100)?.usdPerGpuHour, 1.5);
  assert.match(prices.of(h100)?.source ?? '', /mine\.yaml: our reserved contract \(2026-11-01\)/);
  assert.equal(prices.of(catalog.gpu('L40S'))?.usdPerGpuHour, loadPrices(catalog).of(catalog.gpu('L40S'))?.usdPerGpuHour);
  assert.equal(prices.of({ ...h100, id: 'mine', usd_per_gpu_hour: 0.9 })?.usdPerGpuHour, 0.9);
});

test('a prices file with a negative, missing or doubled price, an unknown GPU or a date no calendar has, is refused naming the entry', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-prices-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cases: [string, RegExp][] = [
    ['  - gpu: H100-SXM\n    usd_per_gpu_hour: -2\n    source: x\n    date: 2026-01-01\n', /prices\.0\.usd_per_gpu_hour/],
    ['  - gpu: H100-SXM\n    source: x\n    date: 2026-01-01\n', /prices\.0\.usd_per_gpu_hour/],
    ['  - gpu: TPU-v9\n    usd_per_gpu_hour: 2\n    source: x\n    date: 2026-01-01\n', /prices\.0\.gpu: "TPU-v9" is not a GPU/],
    ['  - gpu: H100-SXM\n    usd_per_gpu_hour: 2\n    source: x\n    date: 2026-01-01\n  - gpu: h100\n    usd_per_gpu_hour: 3\n    source: y\n    date: 2026-01-01\n', /prices\.1\.gpu: H100-SXM is priced twice/],
    ['  - gpu: H100-SXM\n    usd_per_gpu_hour: 2\n    source: x\n    date: "2026-13-45"\n', /prices\.0\.date.*calendar date/],
    ['  - gpu: H100-SXM\n    usd_per_gpu_hour: 2\n    source: x\n    date: "2026-02-30"\n', /prices\.0\.date.*calendar date/],
  ];
  cases.forEach(([entries, why], i) => {
    const file = join(dir, `bad${i}.yaml`);
    writeFileSync(file, `currency: USD\nprices:\n${entries}`);
    assert.throws(() => loadPrices(catalog, file), (e) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && why.test((e as Error).message) && (e as Error).message.includes(file), `case ${i}`);
  });
});

test('a result costs its GPUs by the hour and, per million output tokens, at the goodput it measured', () => {
  const prices = loadPrices(catalog);
  const r = { hardware: { gpu: 'H100-SXM', count: 2 }, output_throughput: 1000, request_throughput: 4, request_goodput: 3 } as BenchmarkResult;
  assert.equal(goodputOutputTokS(r), 750);
  const c = resultCost(r, prices, catalog);
  const hourly = (prices.of(catalog.gpu('H100-SXM'))?.usdPerGpuHour ?? 0) * 2;
  assert.equal(c?.usd_per_hour, hourly);
  assert.ok(Math.abs((c?.usd_per_million_output_tokens ?? 0) - (hourly / (750 * 3600)) * 1e6) < 1e-12);
  assert.equal(resultCost({ ...r, hardware: null }, prices, catalog), null, 'no hardware, no cost');
  assert.equal(resultCost({ ...r, hardware: { gpu: 'MI300X', count: 1 } }, prices, catalog), null, 'no price, no cost');
  assert.equal(resultCost({ ...r, output_throughput: 0 }, prices, catalog)?.usd_per_million_output_tokens, null);
});
