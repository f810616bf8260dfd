import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { gatherRuns, gatherStudy } from '../../src/export/gather.js';
import type { ExportItem } from '../../src/export/types.js';
import { openStore } from '../../src/store/index.js';
import { captureIo } from '../helpers/cli.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';

/**
 * A real history for the export tests, in a temp SQLite file: a two-trial study on the simulator
 * (`tune --target sim`) and runs ingested from the ingest fixtures (a vllm bench serve result, a
 * GuideLLM report of three benchmarks without ITL, a genai-perf export), all through the CLI.
 */
export const STUDY = 'exp-study';
export const INGEST_FIXTURES = ['vllm-serve-newest.json', 'guidellm-v0.5.json', 'profile_export_genai_perf.json'] as const;

export interface History {
  readonly dir: string;
  readonly db: string;
  readonly trials: ExportItem[];
  readonly runs: ExportItem[];
  readonly cleanup: () => void;
}

export async function buildHistory(): Promise<History> {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-export-'));
  const db = join(dir, 'history.db');
  writeFileSync(join(dir, 'small.yaml'), SMALL_CHAT_WORKLOAD_YAML);
  const tune = captureIo(dir);
  const deployment = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml'];
  assert.equal(await main(['tune', '--study', STUDY, ...deployment, '--target', 'sim', '--budget-trials', '2', '--seed', '3', '--no-report', '--db', db], tune), 0, tune.err());
  const ingest = captureIo(dir);
  const files = INGEST_FIXTURES.map((f) => join(process.cwd(), 'test', 'fixtures', 'ingest', f));
  const code = await main(['ingest', ...files, '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--set', 'max_num_seqs=128', '--set', 'enable_prefix_caching=true', '--db', db], ingest);
  assert.equal(code, 0, ingest.out() + ingest.err());
  const store = openStore(db, { readonly: true });
  try {
    const catalog = defaultCatalog();
    const trials = gatherStudy(store, catalog, STUDY).items;
    const runs = gatherRuns(store, catalog, { sourceFormat: 'vllm_bench_serve' }).concat(gatherRuns(store, catalog, { sourceFormat: 'guidellm' }), gatherRuns(store, catalog, { sourceFormat: 'genai_perf' }));
    assert.equal(trials.length, 2, 'both trials of the study completed');
    assert.equal(runs.length, 5, 'one vllm run, three GuideLLM benchmarks, one genai-perf run');
    return { dir, db, trials, runs, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  } finally {
    store.close();
  }
}

/** The stored value of a result key, or undefined where the run's source lacked it (RunMeta.unavailable). */
export function stored(item: ExportItem, key: string): unknown {
  if (item.unavailable.includes(key)) return undefined;
  return (item.result as Record<string, unknown>)[key];
}
