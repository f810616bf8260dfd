import type { Catalog } from '../catalog/index.js';
import type { SimProfile } from '../domain/index.js';
import type { SimPool } from './sim-pool.js';
import { LIB_GPUS, libInput, libPrediction, type LibRow } from './llm-inference-bench.js';

/**
 * An end-to-end check of a GPU's profile that no stack offset can fake: the same batch measured on two
 * GPUs with the same software (LLM-Inference-Bench ran one vLLM on A100 and H100), so the ratio of the
 * measured latencies is what the GPUs differ by, and the simulator's ratio must match it whatever it
 * gets wrong about that old stack on both.
 */

export interface GpuPair {
  readonly key: string;
  readonly model: string;
  readonly gpus: number;
  readonly ioTokens: number;
  readonly batch: number;
  readonly a: LibRow;
  readonly b: LibRow;
}

/** Rows of the same model, GPU count, length and batch measured on both GPUs (catalog ids). */
export function libGpuPairs(rows: readonly LibRow[], gpuA: string, gpuB: string): GpuPair[] {
  const key = (r: LibRow): string => `${r.model} × ${r.num_gpus} L=${r.io_len_tokens} B=${r.batch_size}`;
  const on = (gpu: string): Map<string, LibRow> => new Map(rows.filter((r) => LIB_GPUS[r.hardware] === gpu).map((r) => [key(r), r]));
  const a = on(gpuA);
  const b = on(gpuB);
  return [...a].flatMap(([k, ra]) => {
    const rb = b.get(k);
    return rb === undefined ? [] : [{ key: k, model: ra.model, gpus: ra.num_gpus, ioTokens: ra.io_len_tokens, batch: ra.batch_size, a: ra, b: rb }];
  });
}

export interface RatioScore {
  readonly pairs: number;
  /** Mean |simulated ratio / measured ratio − 1|, and the mean signed error of the ratio. */
  readonly mape: number;
  readonly signed: number;
}

/** Scores simulated latencies (a, b per pair; null where a batch did not finish) against the measured ratio. */
export function ratioScore(pairs: readonly GpuPair[], simA: readonly (number | null)[], simB: readonly (number | null)[]): RatioScore {
  const errs = pairs.flatMap((p, i) => {
    const a = simA[i];
    const b = simB[i];
    if (a === null || a === undefined || b === null || b === undefined) return [];
    return [a / b / (p.a.measured_latency_s / p.b.measured_latency_s) - 1];
  });
  return score(errs);
}

/** Mean absolute and mean signed relative error of the pairs compared. */
function score(errs: readonly number[]): RatioScore {
  const n = errs.length;
  return { pairs: n, mape: n === 0 ? 0 : errs.reduce((s, e) => s + Math.abs(e), 0) / n, signed: n === 0 ? 0 : errs.reduce((s, e) => s + e, 0) / n };
}

/**
 * The same ratio on what a batch adds over one request at the same GPU count and length (latency at B
 * minus latency at B = 1): the old stack's CPU time per engine step, paid alike by every batch size on
 * both GPUs, cancels, and what is left is GPU work (weights read by more tokens, KV read, prefill).
 */
export function marginalRatioScore(pairs: readonly GpuPair[], simA: readonly (number | null)[], simB: readonly (number | null)[]): RatioScore {
  const single = new Map(pairs.flatMap((p, i) => (p.batch === 1 ? [[`${p.model}/${p.gpus}/${p.ioTokens}`, i] as const] : [])));
  const errs = pairs.flatMap((p, i) => {
    const j = single.get(`${p.model}/${p.gpus}/${p.ioTokens}`);
    if (p.batch === 1 || j === undefined) return [];
    const q = pairs[j] as GpuPair;
    const [a, a1, b, b1] = [simA[i], simA[j], simB[i], simB[j]];
    if (a === null || a === undefined || a1 === null || a1 === undefined || b === null || b === undefined || b1 === null || b1 === undefined) return [];
    const [addedA, addedB] = [p.a.measured_latency_s - q.a.measured_latency_s, p.b.measured_latency_s - q.b.measured_latency_s];
    // A batch measured no slower than one request (noise at small batches) has no ratio to compare.
    if (!(addedA > 0 && addedB > 0 && b - b1 > 0 && a - a1 > 0)) return [];
    return [(a - a1) / (b - b1) / (addedA / addedB) - 1];
  });
  return score(errs);
}

export interface LibA100Scores {
  readonly datasheet: { readonly whole: RatioScore; readonly marginal: RatioScore };
  readonly fitted: { readonly whole: RatioScore; readonly marginal: RatioScore };
}

/**
 * LLM-Inference-Bench's Llama-3-8B pairs (A100-40GB and H100), simulated as the catalog's Llama-3.1-8B at
 * Llama 3's 8k context: the H100 under `profile`, the A100 under `profile` alone (its datasheet) and
 * under `a100` (with its overrides), scored on the whole-batch and the marginal ratio.
 */
export async function libA100Check(o: { rows: readonly LibRow[]; pool: Pick<SimPool, 'summaries'>; catalog: Catalog; profile: SimProfile; a100: SimProfile }): Promise<LibA100Scores> {
  const pairs = libGpuPairs(o.rows, 'A100-40GB', 'H100-SXM').filter((p) => p.model === 'meta-llama/Meta-Llama-3-8B');
  const llama3 = o.catalog.model('llama-3.1-8b');
  const latency = async (side: 'a' | 'b', gpu: string, profile: SimProfile): Promise<(number | null)[]> => {
    const inputs = pairs.map((p) => {
      const input = libInput(p[side], llama3, o.catalog.gpu(gpu));
      return { ...input, config: { ...input.config, max_model_len: 8192 } };
    });
    const sums = (await o.pool.summaries(inputs, [profile]))[0] ?? [];
    return pairs.map((p, i) => {
      const s = sums[i];
      return s === null || s === undefined ? null : (libPrediction(s, p[side])?.latencyS ?? null);
    });
  };
  const h100 = await latency('b', 'H100-SXM', o.profile);
  const datasheet = await latency('a', 'A100-40GB', o.profile);
  const fitted = await latency('a', 'A100-40GB', o.a100);
  return {
    datasheet: { whole: ratioScore(pairs, datasheet, h100), marginal: marginalRatioScore(pairs, datasheet, h100) },
    fitted: { whole: ratioScore(pairs, fitted, h100), marginal: marginalRatioScore(pairs, fitted, h100) },
  };
}
