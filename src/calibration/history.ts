import type { Catalog } from '../catalog/index.js';
import type { ProfileParam, SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { SimulateInput } from '../sim/index.js';
import { runMetric, type Store } from '../store/store.js';
import { fitProfile, profileLoss, type BatchEvaluator, type MeasuredPoint, type PredictedPoint } from './fit.js';

/**
 * A digital twin of the user's own deployment: the simulator's efficiencies fitted to the runs the
 * history holds for one GPU (and model): every run with a workload and a measured mean TTFT or TPOT,
 * simulated with its own server config and workload. The same parameters and loss as the default fit,
 * so what a user's runs teach is the same physics, not a per-run correction.
 */
export const MIN_CALIBRATION_RUNS = 6;

/** What a user's runs can pin down: bandwidth and compute efficiencies, fixed per-step and per-request costs. */
export const CALIBRATE_PARAMS: readonly ProfileParam[] = ['eta_weights', 'eta_kv', 'mfu_bf16', 'mfu_fp8', 'layer_fixed_us', 'step_fixed_ms', 'cpu_per_request_us', 'frontend_ms'];

export interface HistoryPoint {
  readonly runId: number;
  readonly input: Omit<SimulateInput, 'catalog'>;
  readonly measured: MeasuredPoint;
}

/**
 * The measured runs of a GPU (and model) as calibration points. `skipped`: runs without a workload or a
 * mean TTFT/TPOT; `simulated`: the simulator's own runs (`tune --target sim`, an ingested `sim run`),
 * left out: a profile fitted to them would be fitted to the profile that made them.
 */
export function historyPoints(store: Store, catalog: Catalog, filter: { readonly gpu: string; readonly model?: string | undefined }): { points: HistoryPoint[]; skipped: number; simulated: number } {
  const hw = catalog.gpu(filter.gpu);
  const runs = store.listRuns({ gpu: hw.id, ...(filter.model === undefined ? {} : { model: catalog.model(filter.model).id }) });
  const points: HistoryPoint[] = [];
  let skipped = 0;
  let simulated = 0;
  for (const run of runs) {
    if (run.result.lmb.source === 'sim') {
      simulated++;
      continue;
    }
    const workload = run.workload ?? run.result.workload;
    const ttft = runMetric(run, 'mean_ttft_ms');
    const tpot = runMetric(run, 'mean_tpot_ms');
    if (workload === null || (ttft === null && tpot === null) || run.result.completed === 0) {
      skipped++;
      continue;
    }
    points.push({
      runId: run.id,
      input: { config: run.server_config, hardware: run.hardware, model: run.model, workload, seed: 1, runtimeFailures: false },
      measured: { ttftMs: ttft !== null && ttft > 0 ? ttft : null, tpotMs: tpot !== null && tpot > 0 ? tpot : null },
    });
  }
  // Oldest first: the order the runs were recorded in, so a fit is the same on every machine.
  points.sort((a, b) => a.runId - b.runId);
  return { points, skipped, simulated };
}

export interface CalibrationReport {
  readonly profile: SimProfile;
  readonly runs: number;
  // snake_case: `sim calibrate --json` prints these as they are.
  readonly fit: { readonly ttft_mape: number | null; readonly tpot_mape: number | null; readonly loss: number };
  /** Each run predicted by a profile fitted without it. */
  readonly leave_one_out: { readonly ttft_mape: number | null; readonly tpot_mape: number | null };
  readonly before: { readonly ttft_mape: number | null; readonly tpot_mape: number | null };
  readonly evaluations: number;
}

function mape(pred: readonly (PredictedPoint | null)[], measured: readonly MeasuredPoint[], key: 'ttftMs' | 'tpotMs'): number | null {
  const errs: number[] = [];
  measured.forEach((m, i) => {
    const p = pred[i];
    const v = m[key];
    if (p === null || p === undefined || v === null) return;
    errs.push(Math.abs(p[key] / v - 1));
  });
  return errs.length === 0 ? null : errs.reduce((a, b) => a + b, 0) / errs.length;
}

/**
 * Fits the profile to the points (from `start`), then predicts each point with a profile refitted
 * without it (two iterations from the full fit, so a leave-one-out costs a fraction of the fit).
 * `evaluate(points, profiles)` prices points under profiles (a worker pool, in practice).
 */
export async function calibrate(opts: {
  readonly points: readonly HistoryPoint[];
  readonly start: SimProfile;
  readonly params?: readonly ProfileParam[];
  readonly evaluate: (points: readonly HistoryPoint[], profiles: readonly SimProfile[]) => Promise<(PredictedPoint | null)[][]>;
  readonly maxEvaluations?: number;
  readonly onProgress?: (p: { phase: string; evaluations: number; loss: number }) => void;
}): Promise<CalibrationReport> {
  const { points } = opts;
  if (points.length < MIN_CALIBRATION_RUNS) {
    throw new LmBenchError(
      'LMB_ERR_HISTORY_TOO_THIN',
      `${points.length} usable runs (a workload and a measured mean TTFT or TPOT each); calibrating needs at least ${MIN_CALIBRATION_RUNS}: ingest more runs of this GPU or measure some with \`lm-bench tune\` against a real server (simulated runs do not count)`,
      { details: { runs: points.length, needed: MIN_CALIBRATION_RUNS } },
    );
  }
  const params = opts.params ?? CALIBRATE_PARAMS;
  const measured = points.map((p) => p.measured);
  const evaluatorFor = (ps: readonly HistoryPoint[]): BatchEvaluator => (profiles) => opts.evaluate(ps, profiles);
  const beforePred = (await opts.evaluate(points, [opts.start]))[0] ?? [];
  const full = await fitProfile({
    start: opts.start,
    params,
    measured,
    evaluate: evaluatorFor(points),
    maxEvaluations: opts.maxEvaluations ?? 400,
    onProgress: (p) => opts.onProgress?.({ phase: `fit, iteration ${p.iteration}`, evaluations: p.evaluations, loss: p.loss }),
  });
  let evaluations = full.evaluations + 1;
  const fitPred = (await opts.evaluate(points, [full.profile]))[0] ?? [];
  const looPred: (PredictedPoint | null)[] = [];
  for (let i = 0; i < points.length; i++) {
    const rest = points.filter((_, j) => j !== i);
    const refit = await fitProfile({
      start: full.profile,
      params,
      measured: rest.map((p) => p.measured),
      evaluate: evaluatorFor(rest),
      maxIterations: 2,
    });
    evaluations += refit.evaluations;
    looPred.push((await opts.evaluate([points[i] as HistoryPoint], [refit.profile]))[0]?.[0] ?? null);
    opts.onProgress?.({ phase: `leave-one-out ${i + 1}/${points.length}`, evaluations, loss: refit.loss });
  }
  return {
    profile: full.profile,
    runs: points.length,
    fit: { ttft_mape: mape(fitPred, measured, 'ttftMs'), tpot_mape: mape(fitPred, measured, 'tpotMs'), loss: profileLoss(fitPred, measured) },
    leave_one_out: { ttft_mape: mape(looPred, measured, 'ttftMs'), tpot_mape: mape(looPred, measured, 'tpotMs') },
    before: { ttft_mape: mape(beforePred, measured, 'ttftMs'), tpot_mape: mape(beforePred, measured, 'tpotMs') },
    evaluations,
  };
}
