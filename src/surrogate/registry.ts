import { LmBenchError } from '../errors.js';
import type { ModelInfo, ModelRecord, Store } from '../store/store.js';
import type { Dataset } from './dataset.js';
import { deserializeSurrogate, measuredRow, serializeSurrogate, type Surrogate, type SurrogateSpec } from './surrogate.js';
import type { TargetName } from './targets.js';
import type { HeldOutPair, ValidationReport } from './validate.js';

/**
 * Saved surrogates and the rule that picks one for a question. Two producers save them: `model
 * train` (scope: everything the filter let in, often the whole store) and every tuning study (scope:
 * the study's GPU and model, into the slot `study:<name>`, at each refit and once more, validated,
 * when the study ends). Every reader (`recommend`, the service, the report) asks `selectSurrogate`, so
 * they all answer from the same model.
 */
export const SURROGATE_KIND = 'surrogate';

/** The runs a surrogate was trained on: those of one GPU and/or one model, or (empty) all of them. */
export interface SurrogateScope {
  readonly gpu?: string | undefined;
  readonly model?: string | undefined;
}

export interface SaveSurrogateInput {
  readonly surrogate: Surrogate;
  readonly dataset: Dataset;
  readonly validation: ValidationReport | null;
  readonly spec: SurrogateSpec;
  readonly seed: number;
  readonly spaceName: string | null;
  readonly scope: SurrogateScope;
  /** The study that fitted it (saved into its slot), or null for `surrogate train`. */
  readonly study: string | null;
}

export const studySlot = (study: string): string => `study:${study}`;

/** Measured runs per `gpu|count|model`, for the trust rule in `recommend`. */
export function historyCounts(d: Dataset): Record<string, number> {
  const out: Record<string, number> = {};
  d.observations.forEach((o, i) => {
    const row = d.rows[i];
    if (row === undefined || !measuredRow(row)) return;
    const k = `${o.hardware.gpu}|${o.hardware.count}|${o.model}`;
    out[k] = (out[k] ?? 0) + 1;
  });
  return out;
}

/** Flat metrics for the store: `<target>.mape`, `<target>.r2`, `feasibility.accuracy`, `sustain.accuracy`. */
export function validationMetrics(v: ValidationReport | null): Record<string, number | null> {
  if (v === null) return {};
  const out: Record<string, number | null> = { folds: v.folds, rows: v.rows, 'feasibility.accuracy': v.feasibility_accuracy, 'sustain.accuracy': v.sustain_accuracy };
  for (const [t, s] of Object.entries(v.targets)) {
    out[`${t}.mape`] = Number.isFinite(s.mape) ? s.mape : null;
    out[`${t}.r2`] = Number.isFinite(s.r2) ? s.r2 : null;
  }
  return out;
}

export function saveSurrogate(store: Store, input: SaveSurrogateInput): ModelRecord {
  const { surrogate, dataset, validation } = input;
  const measured = dataset.rows.filter(measuredRow).length;
  return store.saveModel({
    kind: SURROGATE_KIND,
    ...(input.study === null ? {} : { slot: studySlot(input.study) }),
    blob: serializeSurrogate(surrogate),
    metadata: {
      format: 'lm-bench-surrogate/1',
      feature_names: dataset.featureNames,
      targets: Object.keys(surrogate.targets),
      spec: input.spec,
      seed: input.seed,
      space: input.spaceName,
      scope: { gpu: input.scope.gpu ?? null, model: input.scope.model ?? null },
      study: input.study,
      rows: dataset.rows.length,
      measured,
      history: historyCounts(dataset),
      skipped: dataset.skipped,
      validated: validation !== null,
      folds: validation?.folds ?? 0,
      importance: validation?.importance ?? null,
      interval_scale: validation?.interval_scale ?? null,
      held_out: validation?.held_out ?? null,
    },
    metrics: validationMetrics(validation),
  });
}

/** Whether a saved model's training runs include this GPU and model (models saved before scopes: all runs). */
function covers(info: ModelInfo, gpu: string, model: string): boolean {
  const s = info.metadata['scope'];
  if (s === null || s === undefined) return true;
  if (typeof s !== 'object') return false;
  const scope = s as Record<string, unknown>;
  const ok = (v: unknown, want: string): boolean => v === null || v === undefined || v === want;
  return ok(scope['gpu'], gpu) && ok(scope['model'], model);
}

export interface SurrogateQuestion {
  readonly gpu: string;
  readonly model: string;
  /** A study whose own surrogate is wanted first (the report of that study). */
  readonly study?: string | undefined;
  /** The feature schema the caller encodes with; a model fitted on another one cannot answer. */
  readonly schema?: readonly string[] | undefined;
}

/**
 * The surrogate that answers a question: the study's own when one is named and saved; otherwise the
 * newest surrogate whose training runs cover this GPU and model (trained on the whole store, or on
 * exactly this GPU and model) and whose feature schema matches. `infos` is newest first
 * (`Store.listModels`). Null when none qualifies.
 */
export function selectSurrogate(infos: readonly ModelInfo[], q: SurrogateQuestion): ModelInfo | null {
  const schemaOk = (info: ModelInfo): boolean => {
    if (q.schema === undefined) return true;
    const names = info.metadata['feature_names'];
    return Array.isArray(names) && names.join('\u0000') === q.schema.join('\u0000');
  };
  const surrogates = infos.filter((i) => i.kind === SURROGATE_KIND && schemaOk(i));
  if (q.study !== undefined) {
    const own = surrogates.find((i) => i.slot === studySlot(q.study as string));
    if (own !== undefined) return own;
  }
  return surrogates.find((i) => covers(i, q.gpu, q.model)) ?? null;
}

export interface LoadedSurrogate {
  readonly record: ModelRecord;
  readonly surrogate: Surrogate;
}

export function loadSurrogate(store: Store, info: ModelInfo): LoadedSurrogate {
  const record = store.getModel(info.id);
  return { record, surrogate: deserializeSurrogate(record.blob) };
}

/** The selected surrogate, loaded, or LMB_ERR_MODEL_NOT_TRAINED saying what was looked for. */
export function loadSurrogateFor(store: Store, q: SurrogateQuestion): LoadedSurrogate {
  const info = selectSurrogate(store.listModels(SURROGATE_KIND), q);
  if (info === null) {
    throw new LmBenchError(
      'LMB_ERR_MODEL_NOT_TRAINED',
      `no trained surrogate covers ${q.model} on ${q.gpu}; run a study (\`lm-bench tune\`) or \`lm-bench surrogate train\` first`,
      { details: { gpu: q.gpu, model: q.model } },
    );
  }
  return loadSurrogate(store, info);
}

/** Held-out parity pairs saved with a validated surrogate (empty when it was not validated). */
export function heldOutOf(record: Pick<ModelInfo, 'metadata'>): HeldOutPair[] {
  const v = record.metadata['held_out'];
  return Array.isArray(v) ? (v as HeldOutPair[]) : [];
}

export function intervalScaleOf(record: Pick<ModelInfo, 'metadata'>): Partial<Record<TargetName, number>> {
  const v = record.metadata['interval_scale'];
  return typeof v === 'object' && v !== null ? (v) : {};
}
