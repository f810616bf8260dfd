import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { allreduceSection, kernelAllreduceUs, parseAllreduceRows, profileAllreduceMs } from '../../src/calibration/aic-allreduce.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();
const h100 = catalog.gpu('H100-SXM');
const file = join(PROJECT_ROOT, 'data', 'calibration', 'aiconfigurator-kernels', 'allreduce.csv');
const rows = parseAllreduceRows(readFileSync(file, 'utf8'), file);

test('the allreduce rows: two vLLM releases × 2, 4 and 8 H100s, 128 to 1,048,576 elements, times in ms as timed', () => {
  assert.equal(rows.length, 84);
  assert.deepEqual([...new Set(rows.map((r) => r.gpus))].sort(), [2, 4, 8]);
  const smallest = rows.find((r) => r.version === '0.14.0' && r.gpus === 2 && r.elements === 128);
  assert.equal(smallest?.ms, 0.0042835);
  assert.throws(() => parseAllreduceRows('gpu,vllm_version,num_gpus,message_elems,dtype,latency_ms\nH100-SXM,0.14.0,2.5,128,bf16,0.004\n', 'a.csv'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /a\.csv:2: num_gpus must be a whole number, got "2\.5"/.test((e as Error).message));
});

test("the step model's price of an allreduce: its fixed cost, then the ring's bytes at the link's rate", () => {
  const p = catalog.profile;
  const small = profileAllreduceMs(p, h100, 2, 128);
  assert.ok(Math.abs(small - p.allreduce_nvlink_us / 1000) < 0.001, String(small));
  // A larger message costs more, more so on more GPUs (the ring moves 2(n−1)/n of it).
  assert.ok(profileAllreduceMs(p, h100, 8, 1_048_576) > profileAllreduceMs(p, h100, 2, 1_048_576));
  const md = allreduceSection(rows, p, h100);
  assert.match(md, /\| 0\.14\.0 \| 2 \| 4\.3 \| \d+\.\d \|/);
  assert.match(md, /A small allreduce takes \d\.\d–\d\.\d µs under graphs/);
  // The shipped profile is pinned; one that is not says so, and how to pin it.
  assert.match(md, /is pinned to the kernel's median/);
  assert.match(allreduceSection(rows, { ...p, allreduce_nvlink_us: 20.9 }, h100), /is 20\.9 µs, not the kernel's median: rerun scripts\/calibrate\.ts to pin it/);
});

test("the allreduce's fixed cost is the kernel's median small-message time, whatever the large messages take", () => {
  const us = kernelAllreduceUs(rows);
  // Small messages on 2–8 H100s took 4.2–5.6 µs under graphs; their median lies inside.
  assert.ok(us > 4.2 && us < 5.6, String(us));
  // A slower large message does not move it; a slower small one does.
  const slowLarge = rows.map((r) => (r.elements > 8192 ? { ...r, ms: r.ms * 10 } : r));
  assert.equal(kernelAllreduceUs(slowLarge), us);
  const slowSmall = rows.map((r) => (r.elements <= 8192 ? { ...r, ms: r.ms * 2 } : r));
  assert.ok(Math.abs(kernelAllreduceUs(slowSmall) - 2 * us) < 1e-9);
  assert.throws(() => kernelAllreduceUs(rows.filter((r) => r.elements > 8192)), (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID'));
  // The shipped profile charges what the kernel takes (scripts/calibrate.ts pins it, to 3 digits).
  assert.equal(catalog.profile.allreduce_nvlink_us, Number(us.toPrecision(3)));
});
