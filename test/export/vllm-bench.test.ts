import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ALL_KNOB_NAMES, STAT_KEYS } from '../../src/domain/index.js';
import { exportDocuments } from '../../src/export/documents.js';
import { baseName } from '../../src/export/ids.js';
import type { ExportItem } from '../../src/export/types.js';
import { ingestSidecar, vllmBenchResult } from '../../src/export/vllm-bench.js';
import { parseFile } from '../../src/ingest/parse-file.js';
import { buildHistory, stored, type History } from './history.js';

// `export --format vllm`: the keys `vllm bench serve --save-result` writes, in its order, each figure the
// stored one or absent; and lm-bench's own ingest reads the file back as vllm_bench_serve, same figures.

let h: History;
before(async () => {
  h = await buildHistory();
});
after(() => h.cleanup());

/**
 * The keys of a `vllm bench serve` result in the order vLLM writes them (vllm-project/vllm
 * vllm/benchmarks/serve.py, main_async's result_json then benchmark()'s result; the per-request arrays
 * and rtfx, which lm-bench does not keep, left out), the client queue last (written under --max-concurrency).
 */
const VLLM_ORDER = [
  'date', 'endpoint_type', 'backend', 'label', 'model_id', 'tokenizer_id', 'num_prompts',
  'request_rate', 'burstiness', 'max_concurrency',
  'duration', 'completed', 'failed', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'request_goodput',
  'output_throughput', 'total_token_throughput', 'max_output_tokens_per_s', 'max_concurrent_requests',
  ...['ttft', 'tpot', 'itl', 'e2el'].flatMap((m) => ['mean', 'median', 'std', 'p50', 'p90', 'p95', 'p99'].map((s) => `${s}_${m}_ms`)),
  'mean_client_queue_time_ms', 'p99_client_queue_time_ms',
  // What vLLM has no key for, last, as `vllm bench serve --metadata` adds keys: read back by lm-bench's ingest.
  'lm_bench_source', 'lm_bench_content_hash', 'lm_bench_start_epoch_ms', 'lm_bench_energy', 'lm_bench_server_metrics',
]; // prettier-ignore
const KNOBS: readonly string[] = ALL_KNOB_NAMES;
const FIGURES = ['duration', 'completed', 'failed', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'output_throughput', 'total_token_throughput', 'max_output_tokens_per_s', 'max_concurrent_requests', ...STAT_KEYS];

const all = (): ExportItem[] => [...h.trials, ...h.runs];

describe('export --format vllm', () => {
  it("writes vLLM's keys in vLLM's order, the knobs beside them, every figure the stored one or absent", () => {
    for (const item of all()) {
      const doc = vllmBenchResult(item);
      const keys = Object.keys(doc).filter((k) => !KNOBS.includes(k));
      assert.deepEqual(keys, VLLM_ORDER.filter((k) => keys.includes(k)), "only vLLM keys, in its order, then lm-bench's");
      for (const key of FIGURES) assert.equal(doc[key], stored(item, key), key);
      for (const [knob, value] of Object.entries(item.server_config)) assert.equal(doc[knob], value, `knob ${knob}`);
      assert.ok('request_goodput' in doc && 'label' in doc && 'tokenizer_id' in doc && 'max_concurrency' in doc, 'keys vLLM writes as null are kept');
      assert.equal(doc['model_id'], stored(item, 'model_id'));
    }
    const guidellm = h.runs.filter((r) => r.subject.kind === 'run' && r.subject.source_format === 'guidellm');
    assert.equal(guidellm.length, 3);
    for (const item of guidellm) {
      const doc = vllmBenchResult(item);
      for (const k of ['mean_itl_ms', 'p99_itl_ms', 'max_output_tokens_per_s']) assert.ok(!(k in doc), `${k}: GuideLLM has none, so it is left out`);
    }
    for (const item of h.runs) {
      const doc = vllmBenchResult(item);
      for (const k of item.unavailable.filter((u) => VLLM_ORDER.includes(u) && u !== 'request_goodput')) assert.ok(!(k in doc), `${k} is unavailable, so left out`);
    }
  });

  it('a run with no completed request keeps its counts and leaves every latency out', () => {
    const base = h.trials[0];
    assert.ok(base);
    const doc = vllmBenchResult({ ...base, result: { ...base.result, completed: 0, failed: 4 } });
    assert.equal(doc['completed'], 0);
    assert.equal(doc['failed'], 4);
    for (const k of STAT_KEYS) assert.ok(!(k in doc), k);
  });

  it("round trip: lm-bench's ingest reads each file back as vllm_bench_serve with the same figures", () => {
    for (const item of all()) {
      const [doc] = exportDocuments([item], 'vllm').documents;
      assert.ok(doc);
      const parsed = parseFile(doc.file.name, new TextEncoder().encode(doc.file.text));
      assert.equal(parsed.format, 'vllm_bench_serve', doc.file.name);
      assert.equal(parsed.runs.length, 1);
      const back = parsed.runs[0];
      assert.ok(back);
      for (const key of FIGURES) {
        const want = stored(item, key);
        const got: unknown = back.meta.unavailable.includes(key) ? undefined : (back.result as Record<string, unknown>)[key];
        // Ingest fills a few keys by definition (duration = completed / throughput…) and notes it.
        if (want === undefined && got !== undefined) assert.ok(back.meta.notes.some((n) => n.startsWith(`${key} derived`)), `${doc.file.name}: ${key} appeared from nowhere`);
        else assert.equal(got, want, `${doc.file.name}: ${key}`);
      }
      for (const key of ['num_prompts', 'request_rate', 'burstiness', 'max_concurrency', 'model_id', 'date', 'request_goodput'] as const) {
        const want = stored(item, key);
        if (want !== undefined && !(key === 'date' && item.result.lmb.source !== 'ingest' && item.result.lmb.start_epoch_ms === 0)) assert.deepEqual(back.result[key], want, `${doc.file.name}: ${key}`);
      }
    }
  });

  it('the sidecar carries the server config, GPU, count, model and an asked-for workload; summary.json lists every record', () => {
    const items = all();
    const { documents, summary } = exportDocuments(items, 'vllm');
    assert.deepEqual(
      documents.map((d) => d.file.name),
      items.map((i) => (i.subject.kind === 'trial' ? `exp-study-trial-${i.subject.trial}.json` : `run-${i.subject.run_id}.json`)),
    );
    for (const [i, d] of documents.entries()) {
      const item = items[i] as ExportItem;
      assert.equal(d.sidecar?.name, `${d.file.name}.config.yaml`);
      const side = parse(d.sidecar?.text ?? '') as Record<string, unknown>;
      assert.deepEqual(side, ingestSidecar(item));
      assert.deepEqual(side['server_config'], item.server_config);
      assert.equal(side['gpu'], 'H100-SXM');
      assert.equal(side['gpus'], item.hardware.count);
      assert.equal(side['model'], 'llama-3.1-8b');
      // A workload reconstructed on ingest is left for ingest to reconstruct again (and say so).
      assert.deepEqual(side['workload'], item.workload_derived ? undefined : (item.workload ?? undefined));
    }
    assert.equal(summary?.name, 'summary.json');
    assert.deepEqual(JSON.parse(summary?.text ?? ''), documents.map((d) => JSON.parse(d.file.text) as unknown));
    const br = exportDocuments(items, 'llm-d-br');
    assert.equal(br.summary, null);
    assert.equal(br.documents[0]?.file.name, 'benchmark_report_v0.2,_exp-study-trial-0.yaml', "llm-d's harness names reports benchmark_report_v0.2,_<result>.yaml");
    assert.ok(br.documents.every((d) => d.sidecar === null));
  });

  it('a study name that is no file name is made one (a path separator never leaves the folder)', () => {
    assert.equal(baseName({ kind: 'trial', study: '../chat h100/β', study_id: 1, trial: 4, trial_id: 9 }), '__chat_h100__-trial-4');
    assert.equal(baseName({ kind: 'run', run_id: 12, source_format: 'guidellm', source_path: null, content_hash: 'x' }), 'run-12');
  });
});
