import { z } from 'zod';
import { GpuFile } from '../catalog/gpu-file.js';
import { Cost, Diagnosis, Objective, Saturation, ServerConfig, Slo, Study, StudyObjective, StudySpec, Trial, Workload } from '../domain/index.js';
import { RunRecord, SourceFormat } from '../store/store.js';
import { StoredRun } from '../ingest/stored.js';

/**
 * Request and response shapes of the v1 API, composed from the domain schemas (no new shapes for
 * domain objects). The OpenAPI document is generated from these (openapi.ts).
 */

/** A bundled workload by name (data/workloads/<name>.yaml) or a workload written out. */
export const WorkloadRef = z.union([z.string().regex(/^[\w-]+$/).describe('a bundled workload: chat, summarize, code'), Workload]);

/**
 * A GPU the catalog lacks, as its datasheet figures: the fields of a `--gpu` YAML file (a client cannot
 * name a file on the service's disk), with the id its runs and studies are filed under required.
 */
export const InlineGpu = GpuFile.extend({
  id: z.string().regex(/^[\w.-]{1,100}$/, '1-100 letters, digits, "_", "." or "-"').describe('what its runs and studies are filed under; not a catalog GPU id'),
});

/** A catalog GPU by id, alias or the name nvidia-smi prints (or a datasheet a stored study carries), or a datasheet. */
export const GpuRef = z.union([z.string().min(1).describe('a catalog GPU id or alias, the name nvidia-smi prints, or the id of a datasheet a stored study began with'), InlineGpu]);
export type GpuRef = z.infer<typeof GpuRef>;

/** The deployment question both a recommendation and a study ask: hardware, model, workload, SLOs, objectives. */
const deploymentShape = {
  gpu: GpuRef,
  gpus: z.int().min(1).max(64),
  model: z.string().min(1),
  workload: WorkloadRef,
  /** Default: the workload's own `slo`. */
  slo: Slo.optional(),
  /**
   * What the answer or study is for, always under the SLOs: `goodput` (default), `tokens_per_joule`,
   * `usd_per_mtok` (on one GPU type, ranked as goodput per GPU, the cost stated beside). It picks the
   * Pareto axes unless `objectives` names them.
   */
  objective: StudyObjective.optional(),
  objectives: z.array(Objective).min(1).optional(),
};

export const RecommendationRequest = z.strictObject({
  ...deploymentShape,
  candidates: z.int().min(100).optional(),
  seed: z.int().nonnegative().default(0),
  /** Hold quantization and the KV-cache dtype at the checkpoint's own (no fp8 numerics). */
  keep_precision: z.boolean().default(false),
});
export type RecommendationRequest = z.infer<typeof RecommendationRequest>;

const Interval = z.object({ mean: z.number(), low: z.number(), high: z.number() });
const RecommendedConfig = z.object({
  config: ServerConfig,
  predicted: z.record(z.string(), Interval),
  pStart: z.number(),
  pMeetsSlo: z.number(),
  /** `knob=value` of the knobs whose values change the model's numerics. */
  numericsChanges: z.array(z.string()),
  /** What limits this configuration on the workload, from a simulated run of it. */
  diagnosis: Diagnosis.nullable().optional(),
  /** Whether that simulated run kept up with the arrivals (a saturated one cannot sustain the load). */
  saturation: Saturation.nullable().optional(),
});
const MeasureCommands = z.object({ config: ServerConfig, vllm_serve: z.string(), lm_bench_run: z.string() });
const KnobValues = z.record(z.string(), z.union([z.number(), z.boolean(), z.string()]));
const FigureSource = z.enum(['measured', 'predicted', 'simulated']);
const PickSide = z.object({ changed: KnobValues, figure: z.number().nullable(), meets_slo: z.boolean() });
/** The pick with every knob whose change does not matter back at vLLM's default (issue 30). */
const Simplification = z.object({
  figure: z.string(),
  tolerance_rel: z.number(),
  source: FigureSource,
  before: PickSide,
  after: PickSide,
  reverted: z.array(z.object({ knob: z.string(), pick_value: z.union([z.number(), z.boolean(), z.string()]), default_value: z.union([z.number(), z.boolean(), z.string()]).nullable(), figure_change_pct: z.number() })),
});
const AttributionStep = z.object({
  knobs: KnobValues,
  figure: z.number().nullable(),
  gain_pct: z.number().nullable(),
  meets_slo: z.boolean().nullable(),
  p99_ttft_ms: z.number().nullable(),
  p99_itl_ms: z.number().nullable(),
  source: FigureSource.nullable(),
});
/** From vLLM's defaults to the pick, one knob a step, each with its gain. */
const Attribution = z.object({ figure: z.string(), defaults: AttributionStep, steps: z.array(AttributionStep) });
const SloMiss = z.object({ slo: z.string(), predicted: z.number(), limit: z.number() });
/** When nothing meets the SLOs: the nearest configurations and the changes that make one meet them. */
const Nearest = z.object({
  candidates: z.array(z.object({ config: ServerConfig, values: z.record(z.string(), z.number()), worst_ratio: z.number(), misses: z.array(SloMiss), would_meet: Slo, vllm_command: z.string() })),
  changes: z.array(
    z.object({
      kind: z.enum(['relax_slo', 'add_gpus', 'accept_fp8']),
      description: z.string(),
      slo: Slo,
      gpus: z.int(),
      config: ServerConfig,
      vllm_command: z.string(),
      output_throughput_per_gpu: z.number().nullable(),
      source: z.enum(['predicted', 'simulated']),
    }),
  ),
  /** Simulated configurations that could not sustain the load (no SLO holds for them), and the most any sustained. */
  saturated: z.object({ count: z.int(), of: z.int(), best_sustained_rps: z.number(), offered_rps: z.number() }).nullable().optional(),
});
export const RecommendationResponse = z.object({
  /** The saved model that answered; null when the simulator answered (no runs of this GPU and model). */
  model_id: z.int().nullable(),
  source: z.object({
    kind: z.enum(['model', 'simulator']),
    model_id: z.int().nullable(),
    study: z.string().nullable(),
    validated: z.boolean(),
    trained_at_ms: z.number().nullable(),
    simulator: z.object({ profile: z.string(), simulated: z.int(), log_sd: z.record(z.string(), z.number()) }).nullable(),
  }),
  rule: z.string(),
  slo: Slo,
  keep_precision: z.boolean(),
  history_runs: z.int(),
  best: RecommendedConfig.nullable(),
  precisionKeeping: RecommendedConfig.nullable(),
  pareto: z.array(RecommendedConfig.extend({ recommended: z.boolean(), note: z.string().nullable() })),
  vllmArgs: z.array(z.string()).nullable(),
  vllm_command: z.string().nullable(),
  precision_keeping_command: z.string().nullable(),
  vllmConfigYaml: z.string().nullable(),
  trust: z.object({ level: z.enum(['ok', 'thin']), reasons: z.array(z.string()), runNext: z.array(ServerConfig) }),
  measure_next: z.array(MeasureCommands),
  enqueue_command: z.string().nullable(),
  candidatesScored: z.int(),
  simplification: Simplification.nullable(),
  attribution: Attribution.nullable(),
  /** What the pick's flags mean for some requests (a lowered max_model_len refuses longer ones). */
  warnings: z.array(z.string()),
  nearest: Nearest.nullable(),
  cost: Cost.nullable().optional(),
});

export const IngestFile = z.strictObject({
  /** Shown in reports and stored as the source path. */
  name: z.string().min(1).max(500).default('body.json'),
  /** The file's text (JSON, JSON Lines, CSV), or a JSON value that is the document itself. */
  content: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]),
  /** A sidecar `<file>.config.yaml` text: knobs, gpu, gpus, model, workload. */
  sidecar_yaml: z.string().optional(),
});

export const IngestRequest = z.strictObject({
  files: z.array(IngestFile).min(1).max(1000),
  server_config: ServerConfig.optional(),
  gpu: z.string().min(1).optional(),
  gpus: z.int().positive().optional(),
  model: z.string().min(1).optional(),
});
export type IngestRequest = z.infer<typeof IngestRequest>;

export const IngestResponse = z.object({
  accepted: z.int(),
  skipped: z.int(),
  files: z.array(
    z.object({ name: z.string(), format: SourceFormat.nullable(), runs: z.int(), accepted: z.int(), skipped: z.int(), run_ids: z.array(z.int()), stored: z.array(StoredRun), warnings: z.array(z.string()) }),
  ),
});

export const RunsQuery = z.strictObject({
  model: z.string().min(1).optional(),
  gpu: z.string().min(1).optional(),
  gpus: z.coerce.number().int().positive().optional(),
  source_format: SourceFormat.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const RunsPage = z.object({ total: z.int(), limit: z.int(), offset: z.int(), runs: z.array(RunRecord) });

export const StudyRequest = z.strictObject({
  name: z.string().min(1).max(200).regex(/^[\w.-]+$/),
  /** A target profile named in the service's config. */
  target: z.string().min(1),
  ...deploymentShape,
  budget_trials: z.int().positive(),
  budget_hours: z.number().positive().optional(),
  parallel: z.int().positive().default(1),
  seed: z.int().nonnegative().default(0),
  sampler: z.enum(['surrogate', 'random']).default('surrogate'),
  measure: z.enum(['fixed', 'max_rate']).default('fixed'),
  /** Configurations to measure first; checked against the search space and its rules. */
  enqueue: z.array(ServerConfig).max(100).default([]),
});
export type StudyRequest = z.infer<typeof StudyRequest>;

export const StudyIdParams = z.strictObject({ id: z.string().regex(/^\d+$|^[\w.-]+$/) });

export const StudyListItem = z.object({
  id: z.int(),
  name: z.string(),
  state: Study.shape.state,
  active: z.boolean(),
  trials: z.int(),
  complete: z.int(),
  budget_trials: z.int(),
  created_at_ms: z.number(),
  updated_at_ms: z.number(),
});

const TrialSummary = z.object({
  number: z.int(),
  state: Trial.shape.state,
  origin: Trial.shape.origin,
  config: ServerConfig,
  meets_slo: z.boolean().nullable(),
  metrics: z.record(z.string(), z.number().nullable()).nullable(),
  failure_reason: z.string().nullable(),
  failure_class: z.string().nullable(),
  /** Why the measured trial missed the SLOs or saturated (`none` when it did neither). */
  diagnosis: Diagnosis.nullable(),
});
const LearnedRule = z.object({
  class: z.string(),
  avoid: z.array(z.object({ knob: z.string(), op: z.string(), value: z.union([z.number(), z.string(), z.boolean()]) })),
  trials: z.array(z.object({ study: z.string(), number: z.int() })),
  text: z.string(),
  scope: z.string(),
});
export const StudyDetail = z.object({
  study: z.object({ id: z.int(), name: z.string(), state: Study.shape.state, spec: StudySpec }),
  active: z.boolean(),
  progress: z.object({ counted: z.int(), budget_trials: z.int(), running: z.int(), waiting: z.int() }),
  stop_reason: z.string().nullable(),
  trials: z.array(TrialSummary),
  front: z.array(z.int()),
  recommendation: z.record(z.string(), z.unknown()).nullable(),
  counts: z.record(z.string(), z.int()),
  /** What failed and what was learned from it: trial numbers per failure class, and the rules on the knobs. */
  failures: z.object({ by_class: z.record(z.string(), z.array(z.int())), rules: z.array(LearnedRule) }),
});

export const StudyAccepted = z.object({ id: z.int(), name: z.string(), state: Study.shape.state, active: z.boolean() });

export const TrainRequestBody = z.strictObject({
  folds: z.int().min(0).max(20).default(3),
  members: z.int().min(1).max(32).optional(),
  rounds: z.int().min(1).max(5000).optional(),
  seed: z.int().nonnegative().default(0),
});

export const ModelInfoSchema = z.object({
  id: z.int(),
  kind: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  metrics: z.record(z.string(), z.number().nullable()),
  size_bytes: z.int(),
  created_at_ms: z.number(),
});
export const ModelList = z.object({ models: z.array(ModelInfoSchema) });
export const TrainResponse = z.object({ model: ModelInfoSchema, rows: z.int(), targets: z.array(z.string()) });

export const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  store: z.enum(['ok', 'failed']),
  workers: z.object({ recommend: z.enum(['ok', 'failed']), recommend_threads: z.int(), training: z.boolean() }),
  studies_running: z.int(),
  model_id: z.int().nullable(),
});

export const ErrorBody = z.object({
  error: z.object({ code: z.string(), kind: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});
