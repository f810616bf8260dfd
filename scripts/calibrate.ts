/**
 * Calibration of the simulator against real vLLM measurements (data/calibration/, each folder with a
 * README naming its source). Fits the efficiencies of `data/sim-profile.yaml` on the dense rows of
 * aiconfigurator's H100 silicon sample under their measurement protocol (src/calibration/silicon.ts),
 * reports fit and leave-one-model-out errors, checks the fitted profile on data it never saw (ML.ENERGY's
 * max_num_seqs sweeps on H100 and B200, models outside the catalog resolved from their config.json,
 * older public tables), and writes docs/calibration.md.
 *
 *   node --import tsx scripts/calibrate.ts            # fit, write data/sim-profile.yaml and the doc
 *   node --import tsx scripts/calibrate.ts --moe-only # keep the dense parameters of the file, fit the MoE ones
 *   node --import tsx scripts/calibrate.ts --report   # only evaluate the current profile and write the doc
 *   node --import tsx scripts/calibrate.ts --gpus     # keep the profile, refit the GPUs' kernel overrides (`sim:` and
 *                                                     # `sim_recent:` in data/hardware.yaml), write them and the doc
 *   node --import tsx scripts/calibrate.ts --power    # keep the efficiencies, refit the power model (ML.ENERGY's
 *                                                     # measured power), write its block of the profile and the doc
 *   node --import tsx scripts/calibrate.ts --refit eta_kv
 *                                                     # refit only the named dense parameters, from the stored profile
 *                                                     # (a full fit is hours on a small machine); the rest, the
 *                                                     # power model included, as --report
 *   node --import tsx scripts/calibrate.ts --holdout layer_fixed_us,step_fixed_ms
 *                                                     # keep the profile; refit the named dense parameters from their
 *                                                     # starting estimates without each source of the dense fit in
 *                                                     # turn, each predicting the one left out; the rest as --report
 *
 * The dense parameters are fitted on the dense rows; the MoE parameters then on the gpt-oss-120b rows
 * with the dense ones fixed (its attention and lm_head are the dense kernels already fitted). The power
 * model (the profile's `power` block, src/physics/power.ts) is fitted last, on ML.ENERGY's measured
 * average power, from the same simulations of its rows (src/calibration/mlenergy-power.ts); `--report`
 * reports the stored one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { parseCsv } from '../src/calibration/csv.js';
import { fitProfile, type MeasuredPoint, type PredictedPoint } from '../src/calibration/fit.js';
import { mlenergyPrediction, parseMlenergy } from '../src/calibration/mlenergy.js';
import { mlenergyCheck, mlenergyRowsTable, mlenergySection } from '../src/calibration/mlenergy-check.js';
import { absError, fixed, mapeText } from '../src/calibration/report-format.js';
import { outOfCatalogCheck } from '../src/calibration/out-of-catalog-check.js';
import { planRow, siliconRows, type RowPlan, type SiliconRow } from '../src/calibration/silicon.js';
import { PROJECT_ROOT, defaultCatalog } from '../src/catalog/index.js';
import { PROFILE_BOUNDS, SimProfileFile, withOverrides, type PowerProfile, type ProfileParam, type SimProfile } from '../src/domain/index.js';
import { fitPower, powerObservation, type PowerObservation } from '../src/calibration/mlenergy-power.js';
import { powerSection, type PowerReportRow } from '../src/calibration/mlenergy-power-report.js';
import { createSimPool } from '../src/calibration/sim-pool.js';
import { historicalPoints } from './calibrate-historical.js';
import { gpuAwarePool, type OverridesByGpu } from '../src/calibration/gpu-aware-pool.js';
import { fitGpuProfiles, withSimLine, type GpuOverrides } from '../src/calibration/gpu-profiles.js';
import { parseVidurKernels } from '../src/calibration/vidur-kernels.js';
import { parseAicAttention, parseAicGemms } from '../src/calibration/aic-kernels.js';
import { parseAicMoe } from '../src/calibration/aic-moe.js';
import { parseLibRows } from '../src/calibration/llm-inference-bench.js';
import { libA100Check } from '../src/calibration/gpu-ratio-check.js';
import { gpuProfilesSection } from '../src/calibration/gpu-profiles-report.js';
import { longContextSection } from '../src/calibration/long-context.js';
import { lowLoadCheck, lowLoadInputs, lowLoadSection, parseLowLoadRows, type LowLoadRow } from '../src/calibration/low-load-check.js';
import { allreduceSection, kernelAllreduceUs, parseAllreduceRows } from '../src/calibration/aic-allreduce.js';
import { LmBenchError } from '../src/errors.js';
import type { SimulateInput } from '../src/sim/index.js';

const DATA = join(PROJECT_ROOT, 'data', 'calibration');
const PROFILE_FILE = join(PROJECT_ROOT, 'data', 'sim-profile.yaml');
const GPUSTACK_FILE = join(DATA, 'gpustack', 'qwen3_8b_h100_latency.csv');
const ALLREDUCE_FILE = join(DATA, 'aiconfigurator-kernels', 'allreduce.csv');
const powerOnly = process.argv.includes('--power');
/** `--gpus`: keep the serving profile, refit the GPUs' kernel overrides (`sim:`, `sim_recent:`) and write them. */
const gpusOnly = process.argv.includes('--gpus');
/** No refit of the efficiencies (`--power` refits the power model alone, `--gpus` the GPUs' overrides). */
const reportOnly = process.argv.includes('--report') || powerOnly || gpusOnly || process.argv.includes('--holdout');
/** Whether this run writes the GPUs' overrides to data/hardware.yaml. */
const writeGpus = !reportOnly || gpusOnly;
const moeOnly = process.argv.includes('--moe-only');
/** The value of `--refit` or `--holdout`, as given (`a,b`), '' when the flag ends the line; null without the flag. */
const flagValue = (flag: 'refit' | 'holdout'): string | null => {
  const at = process.argv.indexOf(`--${flag}`);
  return at < 0 ? null : (process.argv[at + 1] ?? '');
};
const paramsOf = (flag: 'refit' | 'holdout'): ProfileParam[] | null => {
  const v = flagValue(flag);
  return v === null ? null : (v.split(',').filter((k) => k.length > 0) as ProfileParam[]);
};
/** `--refit a,b`: only these dense parameters move, from the stored profile; MoE and leave-one-out results are kept. */
const refitParams = paramsOf('refit');
/** `--holdout a,b`: refit only these, without each source (a silicon model, or the TP 1 rows), and predict it. */
const holdoutParams = paramsOf('holdout');
const catalog = defaultCatalog();
const log = (s: string): void => void process.stderr.write(`${s}\n`);

/** The parameters fitted; the rest (eager, PCIe, per-token tokenising) are not exercised by the fit set. */
const FIT_PARAMS: readonly ProfileParam[] = [
  'eta_weights',
  'eta_kv',
  'mfu_bf16',
  'mfu_fp8',
  'attn_compute_share',
  'kernel_floor_us',
  'layer_fixed_us',
  'link_efficiency',
  'step_fixed_ms',
  'piecewise_per_layer_us',
  'cpu_step_ms',
  'cpu_per_request_us',
  'request_step_us',
  'frontend_ms',
];

/** Refuses `--refit` or `--holdout` unless it names dense parameters a fit moves. */
function checkFitParams(params: readonly ProfileParam[], flag: 'refit' | 'holdout'): void {
  if (params.length > 0 && params.every((k) => FIT_PARAMS.includes(k))) return;
  const given = process.argv[process.argv.indexOf(`--${flag}`) + 1];
  throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} takes dense parameters among ${FIT_PARAMS.join(', ')}; got ${given ?? 'nothing'}`, { details: { field: flag } });
}

/**
 * vLLM's custom allreduce timed alone (data/calibration/aiconfigurator-kernels/allreduce.csv): its fixed cost
 * is pinned, not fitted. The silicon rows are all TP ≥ 2, where a layer pays its fixed cost and two
 * allreduces, so they fix only the sum; fitted, each allreduce took 16 µs that every layer pays (33 µs a
 * layer), and TP 1 was charged too little (docs/calibration.md, "The allreduce against its kernel").
 */
const allreduceRows = parseAllreduceRows(readFileSync(ALLREDUCE_FILE, 'utf8'), ALLREDUCE_FILE);
const ALLREDUCE_US = Number(kernelAllreduceUs(allreduceRows).toPrecision(3));

/** The MoE parameters, fitted after the dense ones on the MoE rows. */
const MOE_PARAMS: readonly ProfileParam[] = ['moe_efficiency', 'moe_weight_efficiency'];

/** Rows measured under a protocol we cannot reproduce: left out of the fit and of the error tables. */
function excluded(r: SiliconRow): string | null {
  if (r.attentionDp === null && r.precision === 'fp8') return 'Dynamo deployment: batch_size is a per-worker batch, the client concurrency is not recorded';
  if (r.batchSize === 512 && r.modelPath.includes('gpt-oss')) return 'InferenceX harness bug (client concurrency hard-coded to 512)';
  return null;
}

interface Point {
  readonly row: SiliconRow;
  readonly plan: RowPlan;
  readonly model: string;
}

const file = join(DATA, 'aiconfigurator-h100', 'vllm_h100.csv');
const { columns, records } = parseCsv(readFileSync(file, 'utf8'), file);
const rows = siliconRows(columns, records, file);
const points: Point[] = [];
const skipped: { row: SiliconRow; why: string }[] = [];
for (const r of rows) {
  const why = excluded(r);
  if (why !== null) {
    skipped.push({ row: r, why });
    continue;
  }
  try {
    points.push({ row: r, plan: planRow(r, catalog), model: catalog.model(r.modelPath).id });
  } catch (err) {
    skipped.push({ row: r, why: err instanceof Error ? err.message.split(';')[0] ?? err.message : String(err) });
  }
}
const isMoe = (p: Point): boolean => catalog.model(p.model).moe !== null;
const moePoints = points.filter(isMoe);
const densePoints = points.filter((p) => !isMoe(p));
const models = [...new Set(densePoints.map((p) => p.model))];
const moeTps = [...new Set(moePoints.map((p) => p.row.tp))].sort((a, b) => a - b);
log(`fit set: ${points.length} rows (${[...new Set(points.map((p) => p.model))].map((m) => `${m} ${points.filter((p) => p.model === m).length}`).join(', ')}); ${skipped.length} rows left out`);

/** Per-GPU overrides the evaluations use: hardware.yaml's, until this run fits new ones. */
let gpuOverrides: OverridesByGpu = Object.fromEntries(catalog.gpus.map((g) => [g.id, g.sim]));
/** Likewise the `sim_recent:` ones, for the points of vLLM 0.14 and later (domain/vllm-release.ts). */
let recentOverrides: OverridesByGpu = Object.fromEntries(catalog.gpus.map((g) => [g.id, g.sim_recent]));
const rawPool = createSimPool();
const pool = gpuAwarePool(rawPool, () => gpuOverrides, () => recentOverrides);
const inputs = (ps: readonly Point[]) => ps.map((p) => {
  const { catalog: _c, ...rest } = p.plan.input;
  return rest;
});
const evaluator = (ps: readonly Point[], extra: readonly Omit<SimulateInput, 'catalog'>[] = []) => async (profiles: readonly SimProfile[]): Promise<(PredictedPoint | null)[][]> =>
  (await pool.summaries([...inputs(ps), ...extra], profiles)).map((row) => row.map((s) => (s === null || s.completed === 0 ? null : { ttftMs: s.ttftMs.mean, tpotMs: s.tpotMs.mean })));
/** Each model weighs the same in the loss, however many rows it has. */
const measured = (ps: readonly Point[]): MeasuredPoint[] =>
  ps.map((p) => ({ ttftMs: p.row.measuredTtftMs, tpotMs: p.row.measuredTpotMs, weight: 1 / ps.filter((q) => q.model === p.model).length }));

/**
 * The dense fit's only rows at a tensor-parallel size of 1: GPUStack's vLLM runs of Qwen3-8B on one H100
 * (data/calibration/gpustack/), their TPOT alone. Their TTFT is mostly the chat endpoint's own time, which
 * the simulator does not price (docs/calibration.md, the low-load section), so it stays a held-out figure.
 * Together they weigh as one model, as each silicon model does.
 */
const TP1_SOURCE = 'GPUStack qwen3-8b, TP 1 (TPOT only)';
const ALL_SOURCES = 'none (every source in the fit)';
const gpustackRows = parseLowLoadRows(readFileSync(GPUSTACK_FILE, 'utf8'), GPUSTACK_FILE);
const tp1Rows = gpustackRows.filter((r) => r.engine === 'vllm');
/** One point per row and seed, with the index of its row. */
const tp1Points = tp1Rows.flatMap((r, row) => lowLoadInputs(r).map((input) => ({ row, input })));
const tp1Inputs = tp1Points.map((p) => p.input);
const tp1Measured: MeasuredPoint[] = tp1Points.map((p) => ({ ttftMs: null, tpotMs: (tp1Rows[p.row] as LowLoadRow).meanTpotMs, weight: 1 / tp1Points.length }));

/** Fits `params` on the points; a dense fit (`withTp1`) adds the TP 1 rows above. */
async function fit(ps: readonly Point[], start: SimProfile, label: string, params: readonly ProfileParam[] = FIT_PARAMS, withTp1 = true): Promise<SimProfile> {
  const t0 = Date.now();
  const out = await fitProfile({
    start,
    params,
    measured: withTp1 ? [...measured(ps), ...tp1Measured] : measured(ps),
    evaluate: evaluator(ps, withTp1 ? tp1Inputs : []),
    maxEvaluations: 700,
    onProgress: (p) => log(`  ${label}: iteration ${p.iteration}, ${p.evaluations} evaluations, loss ${p.loss.toFixed(4)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`),
  });
  return out.profile;
}

/**
 * Where every fit starts: the estimates before any fit (docs/references/vllm-engine.md#efficiency-estimates, from docs/references/vllm-engine.md#calibration-measurements), fixed here
 * so that running this script again gives the same profile, whatever data/sim-profile.yaml holds.
 */
const START: SimProfile = {
  eta_weights: 0.75,
  eta_kv: 0.55,
  kv_fp8_efficiency: 0.5,
  mfu_bf16: 0.65,
  mfu_fp8: 0.5,
  attn_compute_share: 0.7,
  kernel_floor_us: 4,
  layer_fixed_us: 12,
  allreduce_nvlink_us: ALLREDUCE_US,
  allreduce_pcie_us: 40,
  link_efficiency: 0.8,
  step_fixed_ms: 0.35,
  piecewise_per_layer_us: 20,
  eager_per_layer_us: 100,
  cpu_step_ms: 0.4,
  cpu_per_request_us: 4,
  // An order-of-magnitude guess: vLLM's per-request output processing alone is ~1 µs a request (vllm-project/vllm#46112).
  request_step_us: 10,
  moe_efficiency: 0.7,
  moe_weight_efficiency: 1,
  moe_dispatch_us: 30,
  frontend_ms: 1.5,
  frontend_us_per_token: 0.5,
};
const storedFile = SimProfileFile.parse(parseYaml(readFileSync(PROFILE_FILE, 'utf8')));
/** `chain && step`, or `chain` when it already ends with that step. */
const withStep = (chain: string, step: string): string => (chain === step || chain.endsWith(` && ${step}`) ? chain : `${chain} && ${step}`);
/** The command that wrote the profile this page reports: this run's, or the stored one's under --report. */
const profileCommand = reportOnly
  ? storedFile.command
  : moeOnly
    ? // The dense parameters are the stored profile's: so is the command that fitted them.
      `${storedFile.command.replace(/ && node --import tsx scripts\/calibrate\.ts --moe-only$/, '')} && node --import tsx scripts/calibrate.ts --moe-only`
    : refitParams === null
      ? 'node --import tsx scripts/calibrate.ts'
      : // A refit starts from the stored profile: the commands that made it stay in the record, in order
        // (the same refit again, from its own result, is one step).
        withStep(storedFile.command, `node --import tsx scripts/calibrate.ts --refit ${refitParams.join(',')}`);
const fromFile = (): SimProfile => storedFile.profile;
/** What the profile's command did after the last full fit, in order (empty: it is a full fit's). */
const stepsSinceFullFit = profileCommand
  .split(' && ')
  .filter((step) => /--refit |--moe-only/.test(step))
  .map((step) => {
    const refit = /--refit (\S+)/.exec(step)?.[1];
    return refit !== undefined ? `${refit.split(',').join(', ')} refitted alone` : 'the MoE parameters refitted on it';
  });
/**
 * The stored profile with its allreduce at the kernel's cost: what it charged beyond that moves into the
 * layer's fixed cost, which every layer of a tensor-parallel step pays beside its two allreduces, so no
 * silicon row's figure moves; a TP 1 step pays it too. A profile already pinned comes back unchanged.
 */
const pinnedFromFile = (): SimProfile => {
  const p = fromFile();
  // A profile stored before the per-request step cost has none; a fit in log space starts it from the estimate.
  const requestStepUs = p.request_step_us > 0 ? p.request_step_us : START.request_step_us;
  return { ...p, request_step_us: requestStepUs, allreduce_nvlink_us: ALLREDUCE_US, layer_fixed_us: Number((p.layer_fixed_us + 2 * (p.allreduce_nvlink_us - ALLREDUCE_US)).toPrecision(4)) };
};
let fitted: SimProfile;
const lomo: Record<string, SimProfile> = {};
const lotpo: Record<number, SimProfile> = {};
if (reportOnly) {
  fitted = fromFile();
  if (holdoutParams !== null) {
    checkFitParams(holdoutParams, 'holdout');
    // Each fit starts at the starting estimates of the parameters it moves, never at what the stored fit learnt from the held-out rows.
    const start = { ...fromFile(), ...Object.fromEntries(holdoutParams.map((k) => [k, START[k]])) };
    lomo[ALL_SOURCES] = await fit(densePoints, start, 'every source', holdoutParams);
    for (const m of models) lomo[m] = await fit(densePoints.filter((p) => p.model !== m), start, `without ${m}`, holdoutParams);
    lomo[TP1_SOURCE] = await fit(densePoints, start, 'without the TP 1 rows', holdoutParams, false);
  }
} else if (refitParams !== null) {
  checkFitParams(refitParams, 'refit');
  fitted = await fit(densePoints, pinnedFromFile(), `refit ${refitParams.join(', ')}`, refitParams);
} else {
  if (moeOnly) fitted = pinnedFromFile();
  else {
    fitted = await fit(densePoints, START, 'all dense rows');
    // Each held-out fit starts where the joint fit did (the starting estimates), never from what it learnt.
    for (const m of models) lomo[m] = await fit(densePoints.filter((p) => p.model !== m), START, `without ${m}`);
  }
  // MoE: the dense parameters fixed, the MoE ones from the starting values; then leave one TP out.
  const moeStart = { ...fitted, ...Object.fromEntries(MOE_PARAMS.map((k) => [k, START[k]])) };
  fitted = await fit(moePoints, moeStart, 'MoE rows', MOE_PARAMS, false);
  for (const tp of moeTps) lotpo[tp] = await fit(moePoints.filter((p) => p.row.tp !== tp), moeStart, `MoE without TP${tp}`, MOE_PARAMS, false);
}

/* ------------------------------------------------------------------- GPUs beyond the fit set */

// Per-GPU overrides from per-operator kernel times, relative to the H100's, on top of the profile just fitted.
const kernelData = {
  vidur: parseVidurKernels(readFileSync(join(DATA, 'vidur', 'gemm_times.csv'), 'utf8'), 'data/calibration/vidur/gemm_times.csv'),
  aicGemms: parseAicGemms(readFileSync(join(DATA, 'aiconfigurator-kernels', 'gemm.csv'), 'utf8'), 'data/calibration/aiconfigurator-kernels/gemm.csv'),
  aicAttention: parseAicAttention(readFileSync(join(DATA, 'aiconfigurator-kernels', 'decode_attention.csv'), 'utf8'), 'data/calibration/aiconfigurator-kernels/decode_attention.csv'),
  aicMoe: parseAicMoe(readFileSync(join(DATA, 'aiconfigurator-kernels', 'moe.csv'), 'utf8'), 'data/calibration/aiconfigurator-kernels/moe.csv'),
};
const gpuFit = fitGpuProfiles(kernelData, catalog, fitted);
if (writeGpus) {
  gpuOverrides = { ...gpuOverrides, ...gpuFit.overrides };
  recentOverrides = { ...recentOverrides, ...gpuFit.recent };
}
/** The GPUs whose `key` line in data/hardware.yaml differs from what the kernel fit gives. */
const sameOverrides = (a: object, b: object): boolean => {
  const sorted = (o: object): string => JSON.stringify(Object.entries(o).sort(([x], [y]) => x.localeCompare(y)));
  return sorted(a) === sorted(b);
};
const staleIn = (fitted: Readonly<Record<string, GpuOverrides>>, key: 'sim' | 'sim_recent'): string[] =>
  Object.entries(fitted).filter(([g, o]) => !sameOverrides(catalog.gpu(g)[key] ?? {}, o)).map(([g]) => (key === 'sim' ? g : `${g} (${key})`));
const staleOverrides = [...staleIn(gpuFit.overrides, 'sim'), ...staleIn(gpuFit.recent, 'sim_recent')];
log(`GPU overrides from kernel times: ${JSON.stringify(gpuFit.overrides)}${reportOnly && staleOverrides.length > 0 ? ` (data/hardware.yaml differs for ${staleOverrides.join(', ')}: run a fit to write them)` : ''}`);
// End to end: LLM-Inference-Bench's Llama-3-8B batches on A100-40GB and H100 under one vLLM, their ratio.
const libScores = await libA100Check({
  rows: parseLibRows(readFileSync(join(DATA, 'llm-inference-bench', 'catalog_reference.csv'), 'utf8'), 'catalog_reference.csv'),
  pool: rawPool,
  catalog,
  profile: fitted,
  a100: withOverrides(fitted, gpuOverrides['A100-40GB']),
});

/* ------------------------------------------------------------------------------ evaluation */

interface Scored {
  readonly p: Point;
  readonly ttft: number | null;
  readonly tpot: number | null;
}

async function score(ps: readonly Point[], profile: SimProfile): Promise<Scored[]> {
  const preds = (await evaluator(ps)([profile]))[0] ?? [];
  return ps.map((p, i) => ({ p, ttft: preds[i]?.ttftMs ?? null, tpot: preds[i]?.tpotMs ?? null }));
}

const fitScores = await score(densePoints, fitted);
const refScores = await score(densePoints, START);
const lomoScores: Scored[] = [];
if (!reportOnly && !moeOnly && refitParams === null) for (const m of models) lomoScores.push(...(await score(densePoints.filter((p) => p.model === m), lomo[m] as SimProfile)));
/** `--holdout`: each silicon model's rows and the TP 1 rows' TPOT (mean over their seeds), by the fit without them. */
async function refitHoldoutSection(): Promise<string> {
  if (holdoutParams === null) return '';
  const row = async (label: string, fitOf: string, ps: readonly Point[], tp1: boolean): Promise<string> => {
    const profile = lomo[fitOf] as SimProfile;
    const sc = await score(ps, profile);
    const preds = tp1 ? ((await pool.summaries(tp1Inputs, [profile]))[0] ?? []) : [];
    // Each row's TPOT: the mean over its seeds' runs that completed.
    const tp1Errs = tp1 ? tp1Rows.map((r, i) => {
      const mine = tp1Points.flatMap((p, k) => (p.row === i && (preds[k]?.completed ?? 0) > 0 ? [preds[k]?.tpotMs.mean ?? 0] : []));
      return mine.length === 0 ? null : absError(mine.reduce((a, b) => a + b, 0) / mine.length, r.meanTpotMs);
    }) : [];
    const values = holdoutParams.map((k) => `${k} ${Number(profile[k].toPrecision(4))}`).join(', ');
    return `| ${label} | ${sc.length + (tp1 ? tp1Rows.length : 0)} | ${mapeText(sc.map((x) => absError(x.ttft, x.p.row.measuredTtftMs)))} | ${mapeText([...sc.map((x) => absError(x.tpot, x.p.row.measuredTpotMs)), ...tp1Errs])} | ${values} |`;
  };
  const lines = [await row(ALL_SOURCES, ALL_SOURCES, densePoints, true)];
  for (const m of models) lines.push(await row(m, m, densePoints.filter((p) => p.model === m), false));
  lines.push(await row(TP1_SOURCE, TP1_SOURCE, [], true));
  return `### Leave one source out of the refit

\`scripts/calibrate.ts --holdout ${holdoutParams.join(',')}\`: ${holdoutParams.join(' and ')} fitted from their starting estimates
(${holdoutParams.map((k) => `${k} ${START[k]}`).join(', ')}; every other parameter the stored profile's, the allreduce pinned) without each source
of the dense fit in turn, and the source left out predicted by that fit; the first line is the fit on every source from the same start:

| held out | rows | TTFT MAPE | TPOT MAPE | fitted without it |
| --- | --- | --- | --- | --- |
${lines.join('\n')}
`;
}
const refitHoldout = await refitHoldoutSection();
const moeScores = await score(moePoints, fitted);
const moeRefScores = await score(moePoints, { ...fitted, ...Object.fromEntries(MOE_PARAMS.map((k) => [k, START[k]])) });
const lotpoScores: Scored[] = [];
if (!reportOnly && refitParams === null) for (const tp of moeTps) lotpoScores.push(...(await score(moePoints.filter((p) => p.row.tp === tp), lotpo[tp] as SimProfile)));

// Held out: ML.ENERGY max_num_seqs sweeps (dense Qwen3 on H100 and B200).
const mle = parseMlenergy(readFileSync(join(DATA, 'mlenergy', 'qwen3_lm_arena_chat.csv'), 'utf8'), 'qwen3_lm_arena_chat.csv');
// Every step's activity is recorded whatever the power weights (zero ones when the profile has no power
// block yet): the power fit below reads the activity, not the energy.
const IDLE_TDP_FRAC = 0.14;
const activityOnly: PowerProfile = { idle_tdp_frac: IDLE_TDP_FRAC, busy_weight: 0, compute_weight: 0, memory_weight: 0 };
const mleCheck = await mlenergyCheck({ rows: mle, catalog, pool, profile: fitted, power: storedFile.power?.params ?? activityOnly });
const mlePoints = mleCheck.points;
const mleSummaries = mleCheck.summaries;
// Power (issue 25): fitted on the same simulations (their window sums), then the simulator's own figures
// under the fitted model. The idle share is fixed: the saturated rows cannot tell it from busy_weight.
const IDLE_SOURCE =
  'an air-cooled B200 idles at 137 W of its 1,000 W (ROCm/legacy-rocm-build issue #5219, nvidia-smi beside an MI355X); ' +
  'a GPU with a loaded process can stay in its P0 clocks and draw more (NVIDIA/open-gpu-kernel-modules issue #874), which busy_weight covers while steps run';
const powerObs = mlePoints.map((m, i) => (m.row.avg_power_w === null ? null : powerObservation(m.model, m.row.gpu, m.row.avg_power_w, m.row.output_throughput_tok_s, mleSummaries[i] ?? null)));
/**
 * The power model is refitted by a full fit or `--power`; `--report`, `--gpus`, `--holdout`, `--refit` and
 * `--moe-only` keep the stored one (if any). A partial refit that refitted it once moved its memory weight
 * below what HBM costs (docs/calibration.md, "A per-request cost of the step"): refit it on purpose.
 */
const keepsPower = process.argv.includes('--report') || gpusOnly || holdoutParams !== null || refitParams !== null || moeOnly;
const refitPower = !keepsPower || storedFile.power === undefined;
const power: PowerProfile = refitPower ? fitPower(powerObs.filter((o): o is PowerObservation => o !== null), IDLE_TDP_FRAC) : (storedFile.power?.params as PowerProfile);
const roundedPower = Object.fromEntries(Object.entries(power).map(([k, v]) => [k, Number(v.toPrecision(4))])) as PowerProfile;
if (refitPower) log(`power model fitted: ${JSON.stringify(roundedPower)}`);
const powerSummaries = refitPower ? ((await pool.summaries(mlePoints.map((m) => ({ ...m.input, power: roundedPower })), [fitted]))[0] ?? []) : mleSummaries;
const powerRows: (PowerReportRow | null)[] = powerObs.map((o, i) => {
  const s = powerSummaries[i];
  if (o === null) return null;
  const pred = s === null || s === undefined ? null : mlenergyPrediction(s);
  return { obs: o, predictedPowerW: pred?.avgPowerW ?? null, predictedJoulesPerToken: pred?.energyPerOutputTokenJ ?? null };
});
const powerFittedOn = `data/calibration/mlenergy/qwen3_lm_arena_chat.csv: ${powerRows.filter((r) => r !== null).length} rows (Qwen3 8B, 14B, 32B, 30B-A3B on H100 and B200), measured avg_power_w of all the GPUs; idle share fixed`;
const historical = historicalPoints(fitted, DATA, catalog, gpuOverrides);
// Held out: checkpoints outside the catalog, by their Hugging Face ids from a cache of their config.json.
const outOfCatalog = await outOfCatalogCheck({
  catalog,
  pool,
  profile: fitted,
  dataDir: DATA,
  fixturesDir: join(PROJECT_ROOT, 'test', 'fixtures', 'hf-configs'),
  mle: { points: mlePoints, summaries: mleSummaries },
});
await pool.close();

if (!reportOnly || powerOnly) {
  const doc: SimProfileFile = powerOnly
    ? { ...storedFile, power: { fitted_on: powerFittedOn, params: roundedPower } }
    : {
        version: 1,
        name: 'default',
        description: 'fitted on aiconfigurator’s vLLM H100 silicon sample: dense parameters on Qwen3-32B bf16 and Llama-3.1-70B fp8, MoE parameters on gpt-oss-120b; one set for every GPU, which a GPU whose kernels differ overrides in part (data/hardware.yaml `sim:`)',
        fitted_on: `data/calibration/aiconfigurator-h100/vllm_h100.csv: ${densePoints.length} dense rows (${models.join(', ')}), ${moePoints.length} MoE rows (gpt-oss-120b); data/calibration/gpustack: the TPOT of ${tp1Rows.length} vLLM rows (qwen3-8b, TP 1); allreduce_nvlink_us pinned to data/calibration/aiconfigurator-kernels/allreduce.csv`,
        command: profileCommand,
        profile: Object.fromEntries(Object.entries(fitted).map(([k, v]) => [k, Number(v.toPrecision(4))])) as SimProfile,
        power: { fitted_on: powerFittedOn, params: roundedPower },
      };
  writeFileSync(
    PROFILE_FILE,
    `# The simulator's efficiencies (src/domain/sim-profile.ts): one set for every GPU, which differs by its\n# datasheet and, where its kernels differ, its \`sim:\` overrides (data/hardware.yaml). Written by\n# scripts/calibrate.ts; docs/calibration.md has the fit.\n${stringify(doc)}`,
  );
}

// The kernel-fitted GPUs' overrides, written beside their datasheets (a text edit: comments stay).
if (writeGpus) {
  const hardwareFile = join(PROJECT_ROOT, 'data', 'hardware.yaml');
  let text = readFileSync(hardwareFile, 'utf8');
  for (const [gpu, o] of Object.entries<GpuOverrides>(gpuFit.overrides)) {
    text = withSimLine(text, gpu, o, `kernel efficiencies relative to the H100's, ${gpuFit.basis[gpu] ?? 'per-operator times'}: written by scripts/calibrate.ts`);
  }
  for (const [gpu, o] of Object.entries<GpuOverrides>(gpuFit.recent)) {
    text = withSimLine(text, gpu, o, `vLLM 0.14 and later: ${gpuFit.recentBasis[gpu] ?? 'kernel times'}: written by scripts/calibrate.ts`, 'sim_recent');
  }
  writeFileSync(hardwareFile, text);
}

/* ------------------------------------------------------------------------------ the document */

/**
 * `--moe-only` does not refit the dense parameters, so their leave-one-model-out table is the one the
 * last full fit wrote (the dense parameters, and so its numbers, are unchanged).
 */
function keptLomoSection(): string {
  let old = '';
  try {
    old = readFileSync(join(PROJECT_ROOT, 'docs', 'calibration.md'), 'utf8');
  } catch {
    return '';
  }
  const m = /### Leave one model out\n[\s\S]*?(?=\n## )/.exec(old);
  if (m === null) return '';
  // A --holdout run writes its own hold-out subsection in place of the kept one.
  const kept = refitHoldout === '' ? m[0] : m[0].replace(/\n### Leave one source out of the refit\n[\s\S]*$/, '');
  return `${kept.trim()}\n${refitHoldout === '' ? '' : `\n${refitHoldout}`}`;
}

/** Likewise `--report` does not refit the MoE parameters per TP: the leave-one-TP-out lines are the last full fit's. */
function keptLotpoLines(): string {
  let old = '';
  try {
    old = readFileSync(join(PROJECT_ROOT, 'docs', 'calibration.md'), 'utf8');
  } catch {
    return '';
  }
  const m = /\| leave one TP out [^\n]*\n(?:\| held out: TP[^\n]*\n)*/.exec(old);
  return m === null ? '' : m[0].trimEnd();
}

const groupTable = (scores: Scored[], by: (s: Scored) => string): string => {
  const keys = [...new Set(scores.map(by))];
  return keys
    .map((k) => {
      const g = scores.filter((s) => by(s) === k);
      return `| ${k} | ${g.length} | ${mapeText(g.map((s) => absError(s.ttft, s.p.row.measuredTtftMs)))} | ${mapeText(g.map((s) => absError(s.tpot, s.p.row.measuredTpotMs)))} |`;
    })
    .join('\n');
};
const byModel = (s: Scored): string => s.p.model;
const byModelTp = (s: Scored): string => `${s.p.model} TP${s.p.row.tp}`;

const md = `# Calibration: the simulator against real vLLM

Generated by \`node --import tsx scripts/calibrate.ts\` (fit and report; \`--report\` only reports the
profile in \`data/sim-profile.yaml\`; \`--power\` refits its power model alone, \`--gpus\` the GPUs' kernel overrides in \`data/hardware.yaml\`). Data: \`data/calibration/\`, each folder with its source, commit and
licence. Predictions never read a row's measured columns; \`lm-bench sim predict --rows FILE.csv\` gives the
same per-row numbers as this page.

## How the rows were measured

${readFileSync(join(PROJECT_ROOT, 'docs', 'calibration-protocol.md'), 'utf8').trim()}

## The fit

One set of efficiencies for every GPU (\`src/domain/sim-profile.ts\`), fitted by Levenberg–Marquardt on
the parameters' logarithms, reweighted to minimise an absolute loss (\`src/calibration/fit.ts\`), on the
${densePoints.length} dense H100 rows and the TPOT of GPUStack's ${tp1Rows.length} Qwen3-8B rows on one H100 (the low-load section below; the fit's only
tensor-parallel size of 1), each model weighing the same; the loss is |ln(sim/measured)| / 0.25 for TTFT
plus / 0.12 for TPOT, averaged. \`allreduce_nvlink_us\` is not fitted: a fit pins it to the kernel's ${ALLREDUCE_US} µs (the
allreduce section below; this profile's is ${fitted.allreduce_nvlink_us} µs), since rows that all pay a layer's fixed cost beside its
two allreduces cannot tell the two apart. Every parameter is held inside a physically plausible range
(\`PROFILE_BOUNDS\`: no efficiency above what microbenchmarks reach, no fixed cost below a kernel launch). Left out: ${skipped.length} rows
(${[...new Set(skipped.map((s) => s.why))].join('; ')}).

| parameter | before ([estimates](references/vllm-engine.md#efficiency-estimates)) | fitted | allowed range |
| --- | --- | --- | --- |
${FIT_PARAMS.map((k) => `| ${k} | ${START[k]} | ${Number(fitted[k].toPrecision(4))} | ${PROFILE_BOUNDS[k][0]} – ${PROFILE_BOUNDS[k][1]} |`).join('\n')}
| allreduce_nvlink_us | pinned to its kernel | ${fitted.allreduce_nvlink_us} | – |

### Error on the fit set (mean absolute percentage error)

| model | rows | TTFT MAPE | TPOT MAPE |
| --- | --- | --- | --- |
${groupTable(fitScores, byModel)}
| **all dense** | ${fitScores.length} | ${mapeText(fitScores.map((s) => absError(s.ttft, s.p.row.measuredTtftMs)))} | ${mapeText(fitScores.map((s) => absError(s.tpot, s.p.row.measuredTpotMs)))} |

Before the fit (the starting estimates, same protocol): ${groupTable(refScores, byModel).split('\n').map((l) => l.split('|').slice(1, 5).map((c) => c.trim()).join(' ')).join('; ')}.

By tensor-parallel size (fit):

| model, TP | rows | TTFT MAPE | TPOT MAPE |
| --- | --- | --- | --- |
${groupTable(fitScores, byModelTp)}

### Decode at long contexts

${readFileSync(join(PROJECT_ROOT, 'docs', 'calibration-long-context.md'), 'utf8').trim()}

By input and output length (fit; the 1,024 → 8,192 rows decode at contexts from 1k to 9k tokens):

| model, ISL → OSL | rows | TTFT MAPE | TPOT MAPE |
| --- | --- | --- | --- |
${groupTable(fitScores, (s) => `${s.p.model} ${s.p.row.isl} → ${s.p.row.osl}`)}

${longContextSection(catalog, fitted, kernelData.aicAttention, recentOverrides['H100-SXM'])}

${lowLoadSection(lowLoadCheck(gpustackRows, catalog, fitted))}

${allreduceSection(allreduceRows, fitted, catalog.gpu('H100-SXM'))}

${stepsSinceFullFit.length > 0 ? `This profile is the last full fit, then ${stepsSinceFullFit.join('; then ')} (\`${profileCommand.replaceAll('node --import tsx ', '')}\`, each step from the profile the one before stored); the leave-one-model-out table below is the last full fit's.\n\n` : ''}${reportOnly || moeOnly || refitParams !== null ? keptLomoSection() : `### Leave one model out

Each model predicted by the profile fitted on the other model's rows (and GPUStack's TP 1 TPOTs) alone:

| held-out model | rows | TTFT MAPE | TPOT MAPE |
| --- | --- | --- | --- |
${groupTable(lomoScores, byModel)}
| **all** | ${lomoScores.length} | ${mapeText(lomoScores.map((s) => absError(s.ttft, s.p.row.measuredTtftMs)))} | ${mapeText(lomoScores.map((s) => absError(s.tpot, s.p.row.measuredTpotMs)))} |
`}
## Mixture of experts: gpt-oss-120b

The MoE layer's cost (\`src/physics/step-time.ts\` \`moeLayerCost\`): the top-k experts' FLOPs over
the DP × TP ranks, and the bytes of the distinct experts a step's tokens touch, E·(1 − (1 − k/E)^T) under
uniform routing (a decode of 8 requests reads ≈ 29 of gpt-oss-120b's 128 experts per layer, a 1,024-token
chunk all of them), MXFP4 experts computing at the bf16 peak (Hopper has no fp4 tensor cores; vLLM runs
them through Marlin, \`VLLM_MXFP4_USE_MARLIN=1\` in InferenceX's scripts). Two parameters, fitted on the
${moePoints.length} gpt-oss-120b rows (InferenceX protocol, TP 2/4/8) with every dense parameter fixed at the values above:

| parameter | before | fitted | allowed range |
| --- | --- | --- | --- |
${MOE_PARAMS.map((k) => `| ${k} | ${START[k]} | ${Number(fitted[k].toPrecision(4))} | ${PROFILE_BOUNDS[k][0]} – ${PROFILE_BOUNDS[k][1]} |`).join('\n')}

| gpt-oss-120b | rows | TTFT MAPE | TPOT MAPE |
| --- | --- | --- | --- |
${groupTable(moeScores, byModelTp)}
| **fit, all TP** | ${moeScores.length} | ${mapeText(moeScores.map((s) => absError(s.ttft, s.p.row.measuredTtftMs)))} | ${mapeText(moeScores.map((s) => absError(s.tpot, s.p.row.measuredTpotMs)))} |
| before the fit | ${moeRefScores.length} | ${mapeText(moeRefScores.map((s) => absError(s.ttft, s.p.row.measuredTtftMs)))} | ${mapeText(moeRefScores.map((s) => absError(s.tpot, s.p.row.measuredTpotMs)))} |
${reportOnly || refitParams !== null ? keptLotpoLines() : `| leave one TP out (each TP predicted by the fit on the other two) | ${lotpoScores.length} | ${mapeText(lotpoScores.map((s) => absError(s.ttft, s.p.row.measuredTtftMs)))} | ${mapeText(lotpoScores.map((s) => absError(s.tpot, s.p.row.measuredTpotMs)))} |
${groupTable(lotpoScores, (s) => `held out: TP${s.p.row.tp}`)}`}

Not identifiable from these rows: expert parallelism and data-parallel attention (every row is TP only,
\`moe_ep_size\` = \`attention_dp_size\` = 1), so \`moe_dispatch_us\` (${fitted.moe_dispatch_us} µs per all-gather or
reduce-scatter) is an estimate, not a fit: above what the allreduce kernel takes from a small message to a
million elements (4–21 µs, the allreduce section), so it may overcharge a decode step's dispatch; and the EP
load imbalance follows uniform routing. The Qwen3-30B-A3B rows of ML.ENERGY below (TP 2 with expert parallelism) are the
only EP check, held out.

${readFileSync(join(PROJECT_ROOT, 'docs', 'calibration-gpt-oss.md'), 'utf8').trim()}

## Held out: ML.ENERGY max_num_seqs sweeps (H100 and B200, never fitted)

${mlenergySection(mleCheck)}

\`lm-bench sim predict\` predicts such rows from a file: [sim-predict.md](sim-predict.md).

${powerSection(powerRows.filter((r): r is PowerReportRow => r !== null), roundedPower, { idleSource: IDLE_SOURCE, refitted: refitPower && !keepsPower })}
${outOfCatalog.section}
## Profiles beyond Hopper

${gpuProfilesSection({ fit: gpuFit, stale: reportOnly ? staleOverrides : [], lib: libScores })}

## Run-time out-of-memory

${readFileSync(join(PROJECT_ROOT, 'docs', 'calibration-runtime-oom.md'), 'utf8').trim()}

## Older public tables (V0-era stacks; not fitted)

${historical.summary}

## Every fit-set row

| model | TP | ISL | OSL | users | TTFT measured | TTFT sim | TPOT measured | TPOT sim |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${[...fitScores, ...moeScores].map((s) => `| ${s.p.model} | ${s.p.row.tp} | ${s.p.row.isl} | ${s.p.row.osl} | ${s.p.row.batchSize} | ${fixed(s.p.row.measuredTtftMs)} | ${fixed(s.ttft)} | ${fixed(s.p.row.measuredTpotMs, 1)} | ${fixed(s.tpot, 1)} |`).join('\n')}

## Every ML.ENERGY row

${mlenergyRowsTable(mleCheck, powerRows)}

${outOfCatalog.table}

${historical.table}
`;
writeFileSync(join(PROJECT_ROOT, 'docs', 'calibration.md'), md);
log(md.split('## Every fit-set row')[0] ?? '');
