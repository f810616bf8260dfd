import type { Catalog } from '../catalog/index.js';
import type { PowerProfile, SimProfile } from '../domain/index.js';
import { leastSquares } from '../metrics/stats.js';
import type { SimSummary } from '../sim/index.js';
import { PROMPT_MEAN_TOKENS, PROMPT_STD_TOKENS, mlenergyPoints, mlenergyPrediction, type MlenergyPoint, type MlenergyRow } from './mlenergy.js';
import { powerColumns, type PowerReportRow } from './mlenergy-power-report.js';
import { absError, fixed, mapeText } from './report-format.js';
import type { SimPool } from './sim-pool.js';

/**
 * The held-out ML.ENERGY check of docs/calibration.md: every max_num_seqs sweep row the catalog knows,
 * simulated under the fitted profile, its window's output throughput and median ITL against the measured
 * ones, and how much the unpublished prompt lengths move that (the same rows with shorter and longer
 * prompts). Nothing here is fitted; the power fit reads the same simulations (`summaries`).
 */

type Prediction = NonNullable<ReturnType<typeof mlenergyPrediction>>;

export interface MlenergyResult {
  readonly point: MlenergyPoint;
  readonly dense: boolean;
  /** Null where the run never reached ML.ENERGY's window. */
  readonly pred: Prediction | null;
}

export interface MlenergyCheck {
  readonly points: readonly MlenergyPoint[];
  /** The simulations, by point: what the power fit reads. */
  readonly summaries: readonly (SimSummary | null)[];
  readonly results: readonly MlenergyResult[];
  /** One line per alternative prompt length: the dense rows' throughput and median ITL MAPE. */
  readonly sensitivity: readonly string[];
}

export interface MlenergyCheckInput {
  readonly rows: readonly MlenergyRow[];
  readonly catalog: Catalog;
  readonly pool: Pick<SimPool, 'summaries'>;
  readonly profile: SimProfile;
  /** The power model the simulations carry (their window sums are recorded whatever its weights). */
  readonly power: PowerProfile;
}

const ALTERNATIVE_PROMPTS = [
  { mean: 150, std: 200 },
  { mean: 1000, std: 1500 },
] as const;

const predict = (s: SimSummary | null | undefined, p: MlenergyPoint): Prediction | null => (s === null || s === undefined ? null : mlenergyPrediction(s, p));
const throughputError = (r: MlenergyResult): number | null => absError(r.pred?.outputThroughput ?? null, r.point.row.output_throughput_tok_s);
const itlError = (r: MlenergyResult): number | null => absError(r.pred?.medianItlMs ?? null, r.point.row.median_itl_ms);

export async function mlenergyCheck(i: MlenergyCheckInput): Promise<MlenergyCheck> {
  const isDense = (p: MlenergyPoint): boolean => i.catalog.model(p.model).moe === null;
  const points = mlenergyPoints(i.rows, i.catalog).map((p) => ({ ...p, input: { ...p.input, power: i.power } }));
  const summaries = (await i.pool.summaries(points.map((p) => p.input), [i.profile]))[0] ?? [];
  const results = points.map((point, k) => ({ point, dense: isDense(point), pred: predict(summaries[k], point) }));
  const sensitivity: string[] = [];
  for (const prompt of ALTERNATIVE_PROMPTS) {
    const alt = mlenergyPoints(i.rows, i.catalog, prompt).filter(isDense);
    const sums = (await i.pool.summaries(alt.map((p) => p.input), [i.profile]))[0] ?? [];
    const altResults = alt.map((point, k) => ({ point, dense: true, pred: predict(sums[k], point) }));
    sensitivity.push(`prompts of mean ${prompt.mean} tokens: throughput MAPE ${mapeText(altResults.map(throughputError))}, median ITL MAPE ${mapeText(altResults.map(itlError))}`);
  }
  return { points, summaries, results, sensitivity };
}

/** The section's text: the protocol, the error by model and GPU, and the sensitivity to prompt lengths. */
export function mlenergySection(c: MlenergyCheck): string {
  const groups = [...new Set(c.results.map((r) => `${r.point.model}|${r.point.row.gpu}`))].map((key) => {
    const [model, gpu] = key.split('|');
    const g = c.results.filter((r) => r.point.model === model && r.point.row.gpu === gpu);
    return `| ${model} | ${gpu} | ${g.length} | ${mapeText(g.map(throughputError))} | ${mapeText(g.map(itlError))} |`;
  });
  const dense = c.results.filter((r) => r.dense);
  return `ML.ENERGY Benchmark v3 (\`data/calibration/mlenergy/\`), \`lm-arena-chat\` on vLLM 0.11.1: TP = the GPUs,
\`max_num_seqs\` swept, 8,192 batched tokens, max_model_len 20,480, async scheduling; 1,024 LMArena
prompts × the sweep's repeats all sent at t = 0, the server's max_num_seqs the only cap (ml-energy/benchmark
\`mlenergy/benchmark/llm/benchmark.py\`, \`configs/vllm/lm-arena-chat/…/monolithic.config.yaml\`,
\`sweeps.yaml\`). Throughput is over ML.ENERGY's steady-state window (from max_num_seqs first tokens to
N − max_num_seqs − 1 finishes), median ITL over the whole run, as \`mlenergy_data/records/runs.py\`
computes them. Output lengths: lognormal with the row's mean. **Prompt lengths are not published**
(they are in the gated HF dataset): lognormal with mean ${PROMPT_MEAN_TOKENS} and std ${PROMPT_STD_TOKENS} tokens is
our assumption; the sensitivity line below says how much it moves the result. Qwen3-30B-A3B-Instruct-2507
is the MoE model (its 2-GPU rows: TP 2 with \`--enable-expert-parallel\`); the "all" line is the dense ones.

| model | GPU | rows | output throughput MAPE | median ITL MAPE |
| --- | --- | --- | --- | --- |
${groups.join('\n')}
| **all dense** | | ${dense.length} | ${mapeText(dense.map(throughputError))} | ${mapeText(dense.map(itlError))} |

Sensitivity to the assumed prompt lengths: ${c.sensitivity.join('; ')}.

How the median ITL grows with the running batch (the slope over the rows; the section "A per-request cost
of the step" says why the simulated one was half the measured one before 2026-12-07):

${itlSlopeTable(c)}`;
}

/** Rows up to this max_num_seqs enter the slope: past it the batch stops filling on most rows. */
const SLOPE_MAX_SEQS = 256;

/** Least-squares slope of y on x; null under three points or with no spread in x. */
function slope(xs: readonly number[], ys: readonly number[]): number | null {
  if (xs.length < 3 || new Set(xs).size < 2) return null;
  return leastSquares(Float64Array.from(xs), Float64Array.from(ys)).slope;
}

/**
 * How fast the median ITL grows with the running batch, per model and GPU: the least-squares slope of
 * median ITL on the mean running batch over the rows up to max_num_seqs 256, measured (ML.ENERGY's
 * avg_batch_size) and simulated (the simulated window's mean running count). The step-time model's per-request
 * terms (the KV read, `request_step_us`) are what set the simulated slope.
 */
export function itlSlopeTable(c: MlenergyCheck): string {
  const keys = [...new Set(c.results.map((r) => `${r.point.model}|${r.point.row.gpu}`))];
  const lines = keys.map((key) => {
    const [model, gpu] = key.split('|');
    const g = c.results.filter((r) => r.point.model === model && r.point.row.gpu === gpu && r.point.row.max_num_seqs <= SLOPE_MAX_SEQS && r.pred !== null);
    const measured = slope(g.map((r) => r.point.row.avg_batch_size), g.map((r) => r.point.row.median_itl_ms));
    const simulated = slope(g.map((r) => r.pred?.meanRunning ?? 0), g.map((r) => r.pred?.medianItlMs ?? 0));
    const ratio = measured === null || simulated === null || measured <= 0 ? null : simulated / measured;
    return `| ${model} | ${gpu} | ${g.length} | ${fixed(measured, 3)} | ${fixed(simulated, 3)} | ${fixed(ratio, 2)} |`;
  });
  return `| model | GPU | rows (max_num_seqs ≤ ${SLOPE_MAX_SEQS}) | measured, ms per running request | simulated | simulated ÷ measured |
| --- | --- | --- | --- | --- | --- |
${lines.join('\n')}`;
}

/** Every row, measured beside simulated, with the power model's columns (`powerRows` by point). */
export function mlenergyRowsTable(c: MlenergyCheck, powerRows: readonly (PowerReportRow | null)[]): string {
  return `| model | GPU | TP | max_num_seqs | throughput measured | sim | median ITL measured | sim | power measured (W) | sim | J/token measured | sim |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${c.results
  .map(({ point: m, pred }, k) => {
    const ep = m.input.config.enable_expert_parallel === true && (m.input.config.tensor_parallel_size ?? 1) > 1 ? ' + EP' : '';
    return `| ${m.model} | ${m.row.gpu} | ${m.input.config.tensor_parallel_size ?? m.row.tp}${ep} | ${m.row.max_num_seqs} | ${fixed(m.row.output_throughput_tok_s)} | ${fixed(pred?.outputThroughput ?? null)} | ${fixed(m.row.median_itl_ms, 1)} | ${fixed(pred?.medianItlMs ?? null, 1)} | ${powerColumns(powerRows[k] ?? null)} |`;
  })
  .join('\n')}`;
}
