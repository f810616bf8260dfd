import { z } from 'zod';
import { Attribution, BenchmarkResult, ModelSpec, RecommendationAnswer, SimProfile, Simplification, TargetName, Workload } from '../domain/index.js';
import { ExportReport } from '../export/types.js';
import { StudyDetail } from '../http/schemas.js';
import { StoredRun } from '../ingest/stored.js';
import { PlanAnswer } from '../plan/types.js';
import { SourceFormat } from '../store/store.js';
import { StudyRecommendation } from '../tune/summary.js';

/**
 * What each command's `--json` prints, declared (issue 27 §1): snake_case keys like the HTTP API, and
 * test/cli/json-schemas.test.ts parses each command's output with its schema here, failing on a key the
 * schema does not name. The recommendation and the plan are the service's own schemas.
 */

export const RecommendJson = RecommendationAnswer;
export const PlanJson = PlanAnswer;

/** A row `sim predict` could not answer: the error it would have raised, by its catalog code. */
const RowError = z.object({ code: z.string(), message: z.string() }).nullable();
const Figures = z.record(z.string(), z.number().nullable());
/** `mape`: per model and GPU, the rows compared and each figure's `<figure>_mape_pct`. */
const MapeRow = z.record(z.string(), z.union([z.string(), z.number(), z.null()]));
const PredictedRow = { line: z.int(), model: z.string(), gpu: z.string(), error: RowError, measured: Figures, error_pct: Figures };

/** `sim predict --json`: every row predicted (or its error) beside what was measured, by layout. */
export const SimPredictJson = z.discriminatedUnion('layout', [
  z.object({
    layout: z.literal('aiconfigurator-silicon'),
    rows: z.array(z.object({ ...PredictedRow, protocol: z.enum(['inferencex', 'aic-sweep']).nullable(), ttft_ms: z.number().nullable(), tpot_ms: z.number().nullable() })),
    mape: z.array(MapeRow),
  }),
  z.object({
    layout: z.literal('mlenergy-v3'),
    rows: z.array(
      z.object({
        ...PredictedRow,
        output_throughput_tok_s: z.number().nullable(),
        median_itl_ms: z.number().nullable(),
        avg_power_w: z.number().nullable(),
        energy_per_output_token_j: z.number().nullable(),
      }),
    ),
    mape: z.array(MapeRow),
  }),
]);

const Mape = z.object({ ttft_mape: z.number().nullable(), tpot_mape: z.number().nullable() });
/** `sim calibrate --json`: the profile fitted to the history's runs of a GPU, stored as `profile_id`, and its errors. */
export const SimCalibrateJson = z.object({
  gpu: z.string(),
  model: z.string().nullable(),
  profile_id: z.int(),
  runs: z.int(),
  skipped: z.int(),
  /** The simulator's own runs of this GPU, left out of the fit. */
  simulated: z.int(),
  profile: SimProfile,
  fit: Mape.extend({ loss: z.number() }),
  leave_one_out: Mape,
  before: Mape,
  evaluations: z.int(),
});

/** One load point of `run --json`: its BenchmarkResult, and where a stopped run (Ctrl-C) stopped. */
const RunPointJson = BenchmarkResult.extend({ stopped: z.string().optional() });

/** `run --json` that sent load: one point, or each point of a sweep. */
export const RunJson = z.union([RunPointJson, z.object({ results: z.array(RunPointJson) })]);

/** `sim run --json`: one BenchmarkResult, with the sim profile it ran under. */
export const SimRunJson = BenchmarkResult;

/** `run --dry-run --json`: the points a sweep would load, each with its values. */
export const RunDryRunJson = z.object({ dry_run: z.literal(true), points: z.array(z.object({ target: z.string(), values: z.record(z.string(), z.unknown()) })) });

const FileReport = z.object({
  path: z.string(),
  status: z.enum(['accepted', 'skipped', 'rejected']),
  format: SourceFormat.nullable(),
  runs: z.int(),
  accepted: z.int(),
  skipped: z.int(),
  /** Of the skipped, the runs `--replace` gave this ingest's context. */
  replaced: z.int(),
  replaced_ids: z.array(z.int()),
  run_ids: z.array(z.int()),
  stored: z.array(StoredRun),
  warnings: z.array(z.string()),
  code: z.string().optional(),
  reason: z.string().optional(),
});
/** `ingest --json`: the database written and what each file gave. */
export const IngestJson = z.object({
  db: z.string(),
  accepted: z.int(),
  skipped: z.int(),
  replaced: z.int(),
  rejected: z.array(z.object({ path: z.string(), code: z.string(), reason: z.string() })),
  files: z.array(FileReport),
  ignored: z.array(z.string()),
  passed_over: z.array(z.object({ path: z.string(), reason: z.string() })),
});

/** `space --json`: what the rules remove from the discretised space in this context, and the knobs. */
export const SpaceJson = z.object({
  space: z.string(),
  files: z.array(z.string()),
  context: z.object({ gpu: z.string(), gpus: z.int(), model: z.string(), workload: z.string(), max_request_tokens: z.int() }),
  attribution: z.literal('first-match'),
  points_before: z.number(),
  points_after: z.number(),
  /** `exact`, or `estimate` when the rules' walk over the grid would have cost too much (a sample's shares). */
  method: z.enum(['exact', 'estimate']),
  samples: z.int().nullable(),
  costliest: z.object({ rule: z.string(), combinations: z.number(), knobs: z.array(z.object({ name: z.string(), points: z.int() })) }).nullable(),
  rules: z.array(z.object({ id: z.string(), kind: z.string(), source: z.string(), require: z.string(), removed: z.number(), message: z.string() })),
  evaluations: z.int(),
  knobs: z.array(z.object({ name: z.string(), flag: z.string(), type: z.string(), when: z.string().nullable() })),
});

/** k-fold validation of the surrogate (`surrogate eval --json`, and `surrogate train --json` with folds). */
export const ValidationJson = z.object({
  folds: z.int(),
  rows: z.int(),
  targets: z.partialRecord(TargetName, z.object({ n: z.int(), mape: z.number(), r2: z.number(), coverage: z.number() })),
  feasibility_accuracy: z.number().nullable(),
  sustain_accuracy: z.number().nullable(),
  importance: z.record(z.string(), z.number()),
  interval_scale: z.partialRecord(TargetName, z.number()),
  held_out: z.array(z.object({ target: TargetName, measured: z.number(), predicted: z.number(), low: z.number(), high: z.number() })),
});

/** `surrogate train --json`: the saved surrogate and what it was trained on. */
export const SurrogateTrainJson = z.object({
  surrogate_id: z.int(),
  kind: z.string(),
  size_bytes: z.int(),
  rows: z.int(),
  targets: z.array(TargetName),
  metrics: z.record(z.string(), z.number().nullable()),
  validation: ValidationJson.nullable(),
  skipped: z.object({ no_workload: z.int(), unknown_context: z.int() }),
});

/** `tune --json`: the study as `GET /v1/studies/:id` states it (less what only a running service knows), the pick defended, the report written. */
export const TuneJson = StudyDetail.omit({ active: true, queued: true, progress: true }).extend({
  explanation: z.object({ simplification: Simplification.nullable(), attribution: Attribution.nullable(), warnings: z.array(z.string()), vllm_command: z.string().nullable() }),
  /** The report's HTML file (null: --no-report, or an interrupted study). */
  report: z.string().nullable(),
});
/** `demo --json`: a tune's JSON; the demo always writes its report. */
export const DemoJson = TuneJson.extend({ report: z.string() });

/** `report --json`: the files written, the plots that could not be drawn and why, the study's pick. */
export const ReportJson = z.object({ study: z.string(), out: z.string(), files: z.array(z.string()), missing: z.record(z.string(), z.string()), recommendation: StudyRecommendation.nullable() });

/** `export --json`: the files written (the export's own schema). */
export const ExportJson = ExportReport;

/** `models show --json`: what a --model name resolves to (its type is cli/commands/models.ts `ModelReport`). */
export const ModelsShowJson = z.object({
  id: z.string(),
  history_id: z.string().nullable(),
  hf_name: z.string(),
  /** Where the name resolved (catalog/resolve-model.ts `ResolvedModel['origin']`). */
  origin: z.enum(['catalog', 'path', 'hf-cache', 'hub', 'store']),
  location: z.string(),
  config_hash: z.string().nullable(),
  params_b: z.number(),
  active_params_b: z.number(),
  /** All layers, per precision of the cache: bf16 (2 bytes an element) and fp8 (1). */
  kv_bytes_per_token: z.object({ bf16: z.number(), fp8: z.number() }),
  /** Layers that keep at most a window (sliding or chunked attention) of KV per request, or null. */
  local_attention: z.object({ tokens: z.int(), layers: z.int() }).nullable(),
  /** The tensor-parallel sizes vLLM starts the model at, with each GPU's weights. */
  weights_gib_per_gpu: z.array(z.object({ tensor_parallel_size: z.int(), gib: z.number() })),
  /** Every size tried (1, 2, 4, 8): its weights per GPU and whether it needs --enable-expert-parallel, or why vLLM refuses it. */
  tensor_parallel: z.array(
    z.union([
      z.object({ tensor_parallel_size: z.int(), gib: z.number(), expert_parallel: z.boolean() }),
      z.object({ tensor_parallel_size: z.int(), refused: z.string() }),
    ]),
  ),
  spec: ModelSpec,
});

/** `workload from-trace --json`: the workload derived, the trace it came from, the figures fitted, where it was written. */
export const WorkloadFromTraceJson = z.object({
  workload: Workload,
  trace: z.object({ file: z.string(), format: z.string(), sha256: z.string(), rows: z.int(), skipped_zero_rows: z.int(), requests: z.int() }),
  fit: z.object({
    span_s: z.number(),
    rate_rps: z.number(),
    inter_arrival_cv: z.number().nullable(),
    mean_input_tokens: z.number(),
    mean_output_tokens: z.number(),
    max_input_tokens: z.number(),
    max_output_tokens: z.number(),
    shared_token_fraction: z.number().nullable(),
    reused_token_fraction: z.number().nullable(),
  }),
  out: z.string().nullable(),
});
