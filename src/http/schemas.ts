import { z } from 'zod';
import { GpuFile } from '../catalog/gpu-file.js';
import { Diagnosis, Objective, RecommendationAnswer, ServerConfig, Slo, Study, StudyObjective, StudySpec, Trial, VllmVersion, Workload } from '../domain/index.js';
import { RunRecord, SourceFormat } from '../store/store.js';
import { StoredRun } from '../ingest/stored.js';
import { RequestCounts } from '../tune/lost-requests.js';
import { NearestMiss, StudyRecommendation, TrialMetrics } from '../tune/summary.js';

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
  // memory_gb keeps the datasheet's own bounds (GpuFile: 1–2,048 GB, so the OpenAPI document states what
  // is checked). The visible size is bounded too: one in the 1e300s overflowed the memory model's byte
  // counts to Infinity, which surfaced as a search-space rule error naming the service's own file.
  memory_visible_gib: z.number().positive().max(100_000).optional(),
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
  /** The vLLM release served, which the simulator's answers and diagnoses imitate (default: a current one). */
  vllm_version: VllmVersion.optional(),
});
export type RecommendationRequest = z.infer<typeof RecommendationRequest>;

/** What `lm-bench recommend --json` prints too: one schema, in domain/recommendation.ts. */
export const RecommendationResponse = RecommendationAnswer;

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
  /** As `lm-bench ingest --gpus` takes it (1–4096): a count past any deployment would be stored as given. */
  gpus: z.int().positive().max(4096).optional(),
  model: z.string().min(1).optional(),
  /** Figures already stored under another context take this request's (`lm-bench ingest --replace`); without it such a body is rejected. */
  replace: z.boolean().optional(),
});
export type IngestRequest = z.infer<typeof IngestRequest>;

export const IngestResponse = z.object({
  accepted: z.int(),
  skipped: z.int(),
  /** Runs `replace` gave this request's context (counted in `skipped` too). */
  replaced: z.int(),
  files: z.array(
    z.object({ name: z.string(), format: SourceFormat.nullable(), runs: z.int(), accepted: z.int(), skipped: z.int(), replaced_ids: z.array(z.int()), run_ids: z.array(z.int()), stored: z.array(StoredRun), warnings: z.array(z.string()) }),
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
  // `/v1/studies/:id` reads digits as an id: a study named "1" would be found as (and stopped as) study 1.
  name: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[\w.-]+$/)
    .refine((n) => !/^\d+$/.test(n), 'a name of digits only reads as a study id in /v1/studies/:id; give it a letter'),
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
  /** Waiting for one of the service's `limits.running_studies` loops (its state stays `running`). */
  queued: z.boolean(),
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
  /** Requests its run sent and lost (null when it ran no load); a trial that lost more than 5% failed. */
  requests: RequestCounts.nullable(),
  /** The first trial of the same configuration when this one measured it again; else null. */
  repeat_of: z.int().nullable(),
  metrics: TrialMetrics.nullable(),
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
  queued: z.boolean(),
  progress: z.object({ counted: z.int(), budget_trials: z.int(), running: z.int(), waiting: z.int() }),
  stop_reason: z.string().nullable(),
  trials: z.array(TrialSummary),
  front: z.array(z.int()),
  recommendation: StudyRecommendation.nullable(),
  /**
   * No recommendation: the measured configuration that came nearest the SLOs (the worst SLO's measured ÷
   * limit), its `vllm_command` marked `meets_slo: false`; null when there is a pick or nothing was measured.
   */
  nearest_miss: NearestMiss.nullable().optional(),
  counts: z.record(z.string(), z.int()),
  /** The relative run-to-run noise ties are judged by: from repeats, or the default. */
  noise: z.object({ rel: z.number(), dof: z.number(), source: z.enum(['default', 'repeats']) }),
  /** What failed and what was learned from it: trial numbers per failure class, and the rules on the knobs. */
  failures: z.object({ by_class: z.record(z.string(), z.array(z.int())), rules: z.array(LearnedRule) }),
});

export const StudyList = z.object({ studies: z.array(StudyListItem) });

export const StudyAccepted = z.object({ id: z.int(), name: z.string(), state: Study.shape.state, active: z.boolean(), queued: z.boolean() });

export const TrainRequestBody = z.strictObject({
  // One fold validates nothing: 0 (no validation) or at least 2, as the CLI's --folds.
  folds: z.int().min(0).max(20).refine((k) => k !== 1, { message: 'folds must be 0 (no validation) or at least 2' }).default(3),
  members: z.int().min(1).max(32).optional(),
  rounds: z.int().min(1).max(5000).optional(),
  seed: z.int().nonnegative().default(0),
});

/** A saved surrogate's record, without its blob. */
export const SurrogateInfo = z.object({
  id: z.int(),
  kind: z.string(),
  /** A name that holds at most one surrogate at a time (`study:<name>`: a study's latest fit); null for `surrogate train`'s. */
  slot: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  metrics: z.record(z.string(), z.number().nullable()),
  size_bytes: z.int(),
  created_at_ms: z.number(),
});
// `models` and `model` stay the keys while the deprecated `/v1/models` aliases answer from the same handlers.
export const SurrogateList = z.object({ models: z.array(SurrogateInfo) });
export const TrainResponse = z.object({ model: SurrogateInfo, rows: z.int(), targets: z.array(z.string()) });

export const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  store: z.enum(['ok', 'failed']),
  workers: z.object({ recommend: z.enum(['ok', 'failed']), recommend_threads: z.int(), training: z.boolean() }),
  studies_running: z.int(),
  /** The saved surrogate recommendations come from (null: none yet, the simulator answers). */
  surrogate_id: z.int().nullable(),
});

export const ErrorBody = z.object({
  error: z.object({ code: z.string(), kind: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});
