import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIB_GPUS, libInput, libPrediction, parseLibRows } from '../../src/calibration/llm-inference-bench.js';
import { OUT_OF_CATALOG_FIXTURES } from '../../src/calibration/out-of-catalog.js';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { modelSpecFromHfConfig } from '../../src/catalog/hf-config.js';
import { isLmBenchError } from '../../src/errors.js';
import type { SimSummary } from '../../src/sim/index.js';

// The LLM-Inference-Bench slices the calibration page predicts: what they hold, how a bad cell is
// reported, and how a batch becomes a simulation and back.

const DIR = join(PROJECT_ROOT, 'data', 'calibration', 'llm-inference-bench');
const HEADER = 'Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,Latency,Throughput';

test('the out-of-catalog slice holds vLLM rows of four models, each with a config.json fixture, on GPUs the catalog knows', () => {
  const rows = parseLibRows(readFileSync(join(DIR, 'out_of_catalog.csv'), 'utf8'), 'out_of_catalog.csv');
  assert.equal(rows.length, 253);
  assert.deepEqual([...new Set(rows.map((r) => r.model))].sort(), ['Qwen/Qwen2-72B', 'Qwen/Qwen2-7B', 'meta-llama/Llama-2-70b-hf', 'meta-llama/Llama-2-7b-hf']);
  const catalog = defaultCatalog();
  for (const r of rows) {
    assert.equal(r.framework, 'vLLM');
    assert.ok(OUT_OF_CATALOG_FIXTURES[r.model] !== undefined && catalog.findOwn(r.model) === null, r.model);
    assert.ok(LIB_GPUS[r.hardware] !== undefined, r.hardware);
    // The source's throughput is B·2L / latency: the two measured columns agree.
    assert.ok(Math.abs((r.batch_size * 2 * r.io_len_tokens) / r.measured_latency_s / r.measured_throughput_tok_s - 1) < 1e-6, `line ${r.line}`);
  }
});

// Published totals: the Qwen2 technical report (arXiv 2407.10671: 7.6B and 72.71B), and the Llama 2
// checkpoints' parameter counts (6.74B, 68.98B; nominally 7B and 70B).
const PUBLISHED: [fixture: string, billions: number][] = [
  ['qwen2-7b', 7.6],
  ['qwen2-72b', 72.71],
  ['llama-2-7b-hf', 6.74],
  ['llama-2-70b-hf', 68.98],
];

test('the four config.json fixtures derive their published parameter counts, context and dtype', () => {
  for (const [name, billions] of PUBLISHED) {
    const text = readFileSync(join(PROJECT_ROOT, 'test', 'fixtures', 'hf-configs', `${name}.json`), 'utf8');
    const spec = modelSpecFromHfConfig(JSON.parse(text), { id: name, hfName: name, source: name });
    assert.ok(Math.abs(spec.params_b / billions - 1) < 0.01, `${name}: ${spec.params_b.toFixed(2)}B vs ${billions}B`);
    assert.equal(spec.native_context, name.startsWith('qwen2') ? 131072 : 4096, name);
    assert.equal(spec.dtype, name.startsWith('qwen2') ? 'bfloat16' : 'float16', name);
  }
});

test('a cell that is not a number is the file’s error, naming the line and column', () => {
  assert.throws(
    () => parseLibRows(`${HEADER}\nNvidia H100 GPU,1,vLLM,Qwen/Qwen2-7B,128,many,1.0,256\n`, 'x.csv'),
    (err) => isLmBenchError(err, 'LMB_ERR_CONFIG_INVALID') && /x\.csv:2: Batch Size = "many"/.test(err.message),
  );
  assert.throws(() => parseLibRows('Hardware,Model\nNvidia H100 GPU,x\n', 'y.csv'), (err) => isLmBenchError(err, 'LMB_ERR_CONFIG_INVALID') && /Batch Size/.test(err.message));
});

test('a batch is B fixed-length prompts at once on TP = the GPUs; a batch that did not finish has no prediction', () => {
  const catalog = defaultCatalog();
  const [row] = parseLibRows(`${HEADER}\nNvidia H100 GPU,2,vLLM,meta-llama/Meta-Llama-3-8B,128,16,1.0,4096\n`, 'z.csv');
  assert.ok(row !== undefined);
  const input = libInput(row, catalog.model('llama-3.1-8b'), catalog.gpu('H100-SXM'));
  assert.equal(input.config.tensor_parallel_size, 2);
  assert.deepEqual(input.hardware, { gpu: 'H100-SXM', count: 2 });
  assert.equal(input.workload.num_prompts, 16);
  assert.deepEqual(input.workload.arrival, { kind: 'burst' });
  const summary = (completed: number) => ({ completed, durationS: 2 }) as SimSummary;
  assert.deepEqual(libPrediction(summary(16), row), { latencyS: 2, throughputTokS: (16 * 256) / 2 });
  assert.equal(libPrediction(summary(15), row), null);
});
