import { LmBenchError } from '../errors.js';
import type { ModelSpec, Study, StudySpec, StudyState, Trial, TrialState } from '../domain/index.js';
import {
  assertUpdatable,
  assertWaiting,
  sameSpec,
  staleReason,
  studyExists,
  studyNotFound,
  notFound,
} from './codec.js';
import { adoptedIdentity, DEFAULT_RUN_META } from './store.js';
import type {
  CompleteOutcome,
  EventFilter,
  EventRecord,
  FailOutcome,
  ModelInfo,
  ModelRecord,
  NewEvent,
  NewModel,
  NewModelSpec,
  NewRun,
  NewTrial,
  PruneOutcome,
  RequeueReport,
  RunFilter,
  RunRecord,
  Store,
  StoreOptions,
  StoredModelSpec,
} from './store.js';

/**
 * The in-memory Store: the contract's reference behaviour, for tests and throwaway studies. Every
 * value crosses the boundary through structuredClone, which keeps ±Infinity, NaN and Uint8Array, so
 * returned objects never alias stored ones. Multi-step writes validate before they mutate, which is
 * this store's form of a transaction.
 */
export class MemoryStore implements Store {
  readonly #now: () => number;
  #closed = false;
  readonly #studies = new Map<number, Study>();
  readonly #trials = new Map<number, Trial>();
  readonly #runs = new Map<number, RunRecord>();
  readonly #models = new Map<number, ModelRecord>();
  readonly #events: EventRecord[] = [];
  readonly #modelSpecs = new Map<string, StoredModelSpec>();
  #nextTrialId = 1;
  #nextRunId = 1;
  #nextModelId = 1;

  constructor(options: StoreOptions) {
    this.#now = options.now;
  }

  /* studies */

  createStudy(spec: StudySpec): Study {
    this.#open();
    const existing = this.#byName(spec.name);
    if (existing) {
      if (!sameSpec(existing.spec, spec)) throw studyExists(spec.name);
      return clone(existing);
    }
    const now = this.#now();
    const study: Study = { id: this.#studies.size + 1, state: 'created', spec: clone(spec), created_at_ms: now, updated_at_ms: now };
    this.#studies.set(study.id, study);
    return clone(study);
  }

  getStudy(idOrName: number | string): Study {
    const s = this.findStudy(idOrName);
    if (!s) throw studyNotFound(idOrName);
    return s;
  }

  findStudy(idOrName: number | string): Study | null {
    this.#open();
    const s = typeof idOrName === 'number' ? this.#studies.get(idOrName) : this.#byName(idOrName);
    return s ? clone(s) : null;
  }

  listStudies(): Study[] {
    this.#open();
    return [...this.#studies.values()].map(clone);
  }

  setStudyState(studyId: number, state: StudyState): Study {
    const s = this.#study(studyId);
    s.state = state;
    s.updated_at_ms = this.#now();
    return clone(s);
  }

  /* trials */

  createTrial(studyId: number, init: NewTrial): Trial {
    this.#study(studyId);
    return clone(this.#insertTrial(studyId, init));
  }

  claimWaitingTrial(studyId: number): Trial | null {
    this.#study(studyId);
    const next = this.#studyTrials(studyId).find((t) => t.state === 'waiting');
    if (!next) return null;
    return this.startTrial(next.id);
  }

  startTrial(trialId: number): Trial {
    const t = this.#trial(trialId);
    assertWaiting(t);
    const now = this.#now();
    Object.assign(t, { state: 'running', started_at_ms: now, heartbeat_at_ms: now });
    return clone(t);
  }

  heartbeat(trialId: number): void {
    const t = this.#trial(trialId);
    assertUpdatable(t);
    t.heartbeat_at_ms = this.#now();
  }

  setTrialAttrs(trialId: number, attrs: Record<string, unknown>): Trial {
    const t = this.#trial(trialId);
    assertUpdatable(t);
    const add = clone(attrs);
    for (const [k, v] of Object.entries(add)) if (v !== undefined) t.attrs[k] = v;
    return clone(t);
  }

  completeTrial(trialId: number, outcome: CompleteOutcome): Trial {
    return this.#finish(trialId, 'complete', { values: outcome.values, result: outcome.result, reason: null, started: true });
  }

  failTrial(trialId: number, outcome: FailOutcome): Trial {
    return this.#finish(trialId, 'failed', {
      values: outcome.values ?? {},
      result: outcome.result ?? null,
      reason: outcome.reason,
      started: outcome.started,
    });
  }

  pruneTrial(trialId: number, outcome: PruneOutcome = {}): Trial {
    return this.#finish(trialId, 'pruned', {
      values: outcome.values ?? {},
      result: outcome.result ?? null,
      reason: outcome.reason ?? null,
      started: true,
    });
  }

  requeueStaleTrials(studyId: number, staleBeforeMs: number, keep: readonly number[] = []): RequeueReport {
    this.#study(studyId);
    const stale = this.#studyTrials(studyId).filter(
      (t) => t.state === 'running' && !keep.includes(t.id) && (t.heartbeat_at_ms ?? t.started_at_ms ?? t.created_at_ms) < staleBeforeMs,
    );
    const failed: Trial[] = [];
    const requeued: Trial[] = [];
    for (const t of stale) {
      failed.push(this.#finish(t.id, 'failed', { values: {}, result: null, reason: staleReason(t), started: null }));
      requeued.push(clone(this.#insertTrial(studyId, { config: t.config, origin: 'enqueued', attrs: { retry_of: t.id } })));
    }
    return { failed, requeued };
  }

  getTrial(trialId: number): Trial {
    return clone(this.#trial(trialId));
  }

  listTrials(studyId: number, filter: { states?: readonly TrialState[] } = {}): Trial[] {
    this.#study(studyId);
    const states = filter.states;
    return this.#studyTrials(studyId)
      .filter((t) => states === undefined || states.includes(t.state))
      .map(clone);
  }

  /* runs */

  insertRun(run: NewRun): number | 'duplicate' {
    const [id] = this.insertRuns([run]);
    return id ?? 'duplicate';
  }

  insertRuns(runs: readonly NewRun[]): (number | 'duplicate')[] {
    this.#open();
    const hashes = new Set([...this.#runs.values()].map((r) => r.content_hash));
    const now = this.#now();
    const staged: RunRecord[] = [];
    const ids = runs.map((run): number | 'duplicate' => {
      if (hashes.has(run.contentHash)) return 'duplicate';
      hashes.add(run.contentHash);
      const rec: RunRecord = clone({
        id: this.#nextRunId + staged.length,
        result: run.result,
        server_config: run.serverConfig,
        hardware: run.hardware,
        model: run.model,
        workload: run.workload,
        source_format: run.sourceFormat,
        source_path: run.sourcePath,
        content_hash: run.contentHash,
        meta: run.meta ?? DEFAULT_RUN_META,
        created_at_ms: now,
      });
      staged.push(rec);
      return rec.id;
    });
    for (const rec of staged) this.#runs.set(rec.id, rec);
    this.#nextRunId += staged.length;
    return ids;
  }

  getRun(runId: number): RunRecord {
    this.#open();
    const r = this.#runs.get(runId);
    if (!r) throw notFound('run', runId);
    return clone(r);
  }

  listRuns(filter: RunFilter = {}): RunRecord[] {
    const all = this.#matchingRuns(filter).reverse();
    const offset = filter.offset ?? 0;
    return all.slice(offset, filter.limit === undefined ? undefined : offset + filter.limit).map(clone);
  }

  countRuns(filter: Omit<RunFilter, 'limit' | 'offset'> = {}): number {
    return this.#matchingRuns(filter).length;
  }

  /* models */

  saveModel(model: NewModel): ModelRecord {
    this.#open();
    if (model.slot !== undefined) for (const [id, m] of this.#models) if (m.slot === model.slot) this.#models.delete(id);
    const rec: ModelRecord = clone({
      id: this.#nextModelId++,
      kind: model.kind,
      slot: model.slot ?? null,
      blob: model.blob,
      metadata: model.metadata,
      metrics: model.metrics,
      size_bytes: model.blob.byteLength,
      created_at_ms: this.#now(),
    });
    this.#models.set(rec.id, rec);
    return clone(rec);
  }

  getModel(modelId: number): ModelRecord {
    this.#open();
    const m = this.#models.get(modelId);
    if (!m) throw notFound('model', modelId);
    return clone(m);
  }

  latestModel(kind: string): ModelRecord | null {
    this.#open();
    const m = [...this.#models.values()].filter((x) => x.kind === kind).at(-1);
    return m ? clone(m) : null;
  }

  listModels(kind?: string): ModelInfo[] {
    this.#open();
    return [...this.#models.values()]
      .filter((m) => kind === undefined || m.kind === kind)
      .reverse()
      .map(({ blob: _blob, ...info }) => clone(info));
  }

  /* model specs */

  adoptModelSpec(model: NewModelSpec): ModelSpec {
    this.#open();
    const hash = model.config_hash;
    if (hash === null) return clone(model.spec);
    const { id, stored } = adoptedIdentity((k) => this.#modelSpecs.get(k) ?? null, { ...model, config_hash: hash });
    if (stored !== null) return clone(stored.spec);
    const rec: StoredModelSpec = clone({ id, spec: { ...model.spec, id }, config_hash: hash, origin: model.origin, location: model.location, created_at_ms: this.#now() });
    this.#modelSpecs.set(id, rec);
    return clone(rec.spec);
  }

  listModelSpecs(): StoredModelSpec[] {
    this.#open();
    return [...this.#modelSpecs.values()].map(clone);
  }

  /* events */

  appendEvent(event: NewEvent): EventRecord {
    this.#open();
    if (event.studyId !== null) this.#study(event.studyId);
    const rec: EventRecord = clone({
      id: this.#events.length + 1,
      study_id: event.studyId,
      kind: event.kind,
      payload: event.payload === undefined ? null : event.payload,
      at_ms: this.#now(),
    });
    this.#events.push(rec);
    return clone(rec);
  }

  listEvents(filter: EventFilter = {}): EventRecord[] {
    this.#open();
    const out = this.#events.filter(
      (e) =>
        (filter.studyId === undefined || e.study_id === filter.studyId) &&
        (filter.kind === undefined || e.kind === filter.kind) &&
        (filter.afterId === undefined || e.id > filter.afterId),
    );
    return out.slice(0, filter.limit).map(clone);
  }

  close(): void {
    this.#closed = true;
  }

  /* internals */

  #open(): void {
    if (this.#closed) throw new LmBenchError('LMB_ERR_STORE_FAILED', 'the store is closed');
  }

  #byName(name: string): Study | undefined {
    return [...this.#studies.values()].find((s) => s.spec.name === name);
  }

  #study(studyId: number): Study {
    this.#open();
    const s = this.#studies.get(studyId);
    if (!s) throw studyNotFound(studyId);
    return s;
  }

  #trial(trialId: number): Trial {
    this.#open();
    const t = this.#trials.get(trialId);
    if (!t) throw notFound('trial', trialId);
    return t;
  }

  #studyTrials(studyId: number): Trial[] {
    return [...this.#trials.values()].filter((t) => t.study_id === studyId).sort((a, b) => a.number - b.number);
  }

  #insertTrial(studyId: number, init: NewTrial): Trial {
    const now = this.#now();
    const running = init.state === 'running';
    const t: Trial = clone({
      id: this.#nextTrialId++,
      study_id: studyId,
      number: this.#studyTrials(studyId).length,
      state: running ? 'running' : 'waiting',
      origin: init.origin,
      config: init.config,
      values: {},
      result: null,
      failure_reason: null,
      started: null,
      created_at_ms: now,
      started_at_ms: running ? now : null,
      finished_at_ms: null,
      heartbeat_at_ms: running ? now : null,
      attrs: init.attrs ?? {},
    });
    this.#trials.set(t.id, t);
    return t;
  }

  #finish(
    trialId: number,
    state: 'complete' | 'failed' | 'pruned',
    o: { values: Record<string, number | null>; result: Trial['result']; reason: string | null; started: boolean | null },
  ): Trial {
    const t = this.#trial(trialId);
    assertUpdatable(t);
    const next: Trial = {
      ...t,
      state,
      values: clone(o.values),
      result: clone(o.result),
      failure_reason: o.reason,
      started: o.started,
      finished_at_ms: this.#now(),
    };
    this.#trials.set(t.id, next);
    return clone(next);
  }

  #matchingRuns(filter: Omit<RunFilter, 'limit' | 'offset'>): RunRecord[] {
    this.#open();
    const knobs = Object.entries(filter.config ?? {});
    return [...this.#runs.values()].filter(
      (r) =>
        (filter.model === undefined || r.model === filter.model) &&
        (filter.gpu === undefined || r.hardware.gpu === filter.gpu) &&
        (filter.gpuCount === undefined || r.hardware.count === filter.gpuCount) &&
        (filter.sourceFormat === undefined || r.source_format === filter.sourceFormat) &&
        knobs.every(([k, v]) => (r.server_config as Record<string, unknown>)[k] === v),
    );
  }
}

function clone<T>(v: T): T {
  return structuredClone(v);
}
