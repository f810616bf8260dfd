import type { Catalog } from '../catalog/index.js';
import type { SimProfile, Workload } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { simulate, type SimulateInput } from '../sim/index.js';
import { parseCsv, positiveField, positiveIntegerField } from './csv.js';
import { relError, signedPct } from './report-format.js';

/**
 * TTFT and TPOT at low load (1–8 users) from a third party's runs with a known client (data/calibration/gpustack/:
 * Qwen3-8B on one H100 under vLLM 0.11.0, `vllm bench serve` on ShareGPT), beside SGLang and TensorRT-LLM on
 * the same GPU, client and prompts. The vLLM rows' TPOT is the serving fit's only tensor-parallel size of 1
 * (scripts/calibrate.ts); their TTFT is held out: it says how much of a low-load TTFT the simulator's fixed
 * costs account for, and how much the serving stack itself moves it.
 */

export interface LowLoadRow {
  readonly line: number;
  readonly engine: string;
  readonly engineVersion: string;
  readonly concurrency: number;
  readonly prompts: number;
  readonly meanInputTokens: number;
  readonly meanOutputTokens: number;
  readonly requestThroughput: number;
  readonly meanTtftMs: number;
  readonly medianTtftMs: number;
  readonly meanTpotMs: number;
}

/** The rows of the file, each figure as printed; a bad field names its line and column. */
export function parseLowLoadRows(text: string, file: string): LowLoadRow[] {
  const { records } = parseCsv(text, file);
  return records.map((r) => {
    const num = (k: string): number => positiveField(r, file, k);
    const engine = r.fields['engine'] ?? '';
    const engineVersion = r.fields['engine_version'] ?? '';
    if (engine === '' || engineVersion === '') {
      throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: engine and engine_version must be named`, { details: { file, line: r.line } });
    }
    const prompts = positiveIntegerField(r, file, 'num_prompts');
    const concurrency = positiveIntegerField(r, file, 'max_concurrency');
    return {
      line: r.line,
      engine,
      engineVersion,
      concurrency,
      prompts,
      meanInputTokens: num('total_input_tokens') / prompts,
      meanOutputTokens: num('total_generated_tokens') / prompts,
      requestThroughput: num('request_throughput'),
      meanTtftMs: num('mean_ttft_ms'),
      medianTtftMs: num('median_ttft_ms'),
      meanTpotMs: num('mean_tpot_ms'),
    };
  });
}

/** Seeds each vLLM row is simulated on (the lengths are drawn, not ShareGPT's own): their mean is reported. */
const SEEDS = [0, 1, 2] as const;

/**
 * ShareGPT's lengths are not published with the rows, only their totals: lognormal at the rows' means with
 * the spread of the catalog's ShareGPT-like `chat` workload (std = mean for prompts, 0.8 × mean for answers).
 */
function workloadOf(r: LowLoadRow): Workload {
  return {
    name: `gpustack-c${r.concurrency}`,
    api: 'chat',
    input_len: { dist: 'lognormal', mean: r.meanInputTokens, std: r.meanInputTokens, min: 4, max: 4096 },
    output_len: { dist: 'lognormal', mean: r.meanOutputTokens, std: 0.8 * r.meanOutputTokens, min: 4, max: 2048 },
    arrival: { kind: 'closed', concurrency: r.concurrency },
    num_prompts: r.prompts,
    ignore_eos: true,
  };
}

export interface LowLoadResult {
  readonly row: LowLoadRow;
  /** Means over SEEDS; null for another engine's row (not simulated). */
  readonly sim: { readonly meanTtftMs: number; readonly medianTtftMs: number; readonly meanTpotMs: number; readonly requestThroughput: number } | null;
}

/** What the simulator runs for a vLLM row, one input per seed: Qwen3-8B on one H100 at vLLM's defaults at the row's release. */
export function lowLoadInputs(row: LowLoadRow): Omit<SimulateInput, 'catalog'>[] {
  return SEEDS.map((seed) => ({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'qwen3-8b', workload: workloadOf(row), seed, vllmVersion: row.engineVersion, runtimeFailures: false }));
}

/** Simulates the vLLM rows under `profile`; the other engines' rows are shown as measured. */
export function lowLoadCheck(rows: readonly LowLoadRow[], catalog: Catalog, profile: SimProfile): LowLoadResult[] {
  return rows.map((row) => {
    if (row.engine !== 'vllm') return { row, sim: null };
    const runs = lowLoadInputs(row).map((input) => {
      const out = simulate({ ...input, catalog, profile });
      if (!out.ok) throw new LmBenchError('LMB_ERR_INTERNAL', `Qwen3-8B on one H100 at vLLM's defaults did not start: ${out.failure.message}`);
      return out.result;
    });
    const mean = (f: (r: (typeof runs)[number]) => number): number => runs.reduce((s, r) => s + f(r), 0) / runs.length;
    return { row, sim: { meanTtftMs: mean((r) => r.mean_ttft_ms), medianTtftMs: mean((r) => r.median_ttft_ms), meanTpotMs: mean((r) => r.mean_tpot_ms), requestThroughput: mean((r) => r.request_throughput) } };
  });
}

const cell = (measured: number, sim: number | undefined, digits: number): string =>
  sim === undefined ? `${measured.toFixed(digits)} | – | –` : `${measured.toFixed(digits)} | ${sim.toFixed(digits)} | ${signedPct(relError(sim, measured) ?? 0)}`;

const span = (xs: readonly number[], digits: number): string => {
  const lo = Math.min(...xs).toFixed(digits);
  const hi = Math.max(...xs).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
};

/** What the rows say, in figures taken from them. */
function prose(results: readonly LowLoadResult[]): string {
  const vllm = results.filter((r) => r.sim !== null);
  const others = results.filter((r) => r.sim === null);
  if (vllm.length === 0) return '';
  const ttft = span(vllm.map((r) => r.row.meanTtftMs), 0);
  const tpotErr = vllm.map((r) => 100 * Math.abs((r.sim?.meanTpotMs ?? 0) / r.row.meanTpotMs - 1));
  const tpots = results.map((r) => r.row.meanTpotMs);
  const elsewhere = others.map((r) => `${r.row.meanTtftMs.toFixed(0)} ms under ${r.row.engine} (${r.row.concurrency} users)`).join(' and ');
  return `At one to eight users a TTFT of this size is mostly the serving stack's own time: the same prefills took
${elsewhere === '' ? 'no other engine here' : elsewhere}, and ${ttft} ms under vLLM ${vllm[0]?.row.engineVersion ?? ''} through its chat endpoint,
where the simulator (whose \`frontend_ms\` is fitted on InferenceX's \`/v1/completions\` client, above) prices
the GPU's work and a lean front end. Issue 28's long-answer run errs the other way (the simulator's TTFT above
the server's about 50 ms on vLLM 0.15.1, \`/v1/completions\`). Fitting one front-end constant to either would
move the other further off, so neither is fitted: a low-load TTFT is as good as the front end it assumes.
The decode steps are another matter, and the serving fit's only steps at a tensor-parallel size of 1: fitted
on these TPOTs (with the allreduce pinned to its kernel, below), the simulator's are ${span(tpotErr, 0)}% off vLLM's
here, where the engines' mean TPOTs span ${(100 * (Math.max(...tpots) / Math.min(...tpots) - 1)).toFixed(0)}%. Until 2026-12-07, held out and with the allreduce fitted on TP ≥ 2
rows alone, they were 11–12% too fast.`;
}

export function lowLoadSection(results: readonly LowLoadResult[]): string {
  const lines = results.map(({ row: r, sim: s }) =>
    [
      `| ${r.engine} ${r.engineVersion} | ${r.concurrency}`,
      cell(r.meanTtftMs, s?.meanTtftMs, 1),
      cell(r.medianTtftMs, s?.medianTtftMs, 1),
      cell(r.meanTpotMs, s?.meanTpotMs, 2),
      `${cell(r.requestThroughput, s?.requestThroughput, 2)} |`,
    ].join(' | '),
  );
  const first = results[0]?.row;
  return `### Low-load TTFT from a third party (TPOT fitted, TTFT held out)

GPUStack's performance lab (\`data/calibration/gpustack/\`): Qwen3-8B in bf16 on one H100 SXM at each engine's
defaults, \`vllm bench serve\` against \`/v1/chat/completions\` with the same ${first?.prompts ?? 100} ShareGPT conversations
(${first?.meanInputTokens.toFixed(1) ?? '?'} prompt and ${first?.meanOutputTokens.toFixed(1) ?? '?'} answer tokens on average) at 1–8 users. The vLLM rows are simulated at
their release with the catalog's ShareGPT-like spread of lengths at those means (the conversations themselves
are not in the rows), mean of ${SEEDS.length} seeds; the other engines' rows are what the same GPU, client and prompts
measured under another server:

| engine | users | mean TTFT (ms) | sim | error | median TTFT (ms) | sim | error | mean TPOT (ms) | sim | error | req/s | sim | error |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${lines.join('\n')}

${prose(results)}`;
}
