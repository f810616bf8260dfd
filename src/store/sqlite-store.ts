import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { registerModel } from '../catalog/index.js';
import type { ModelSpec, Study, StudySpec, StudyState, Trial, TrialState } from '../domain/index.js';
import {
  assertUpdatable,
  assertWaiting,
  encodeJson,
  notFound,
  runContextConflict,
  sameSpec,
  type RunConflict,
  staleReason,
  studyExists,
  studyNotFound,
  valueToStored,
} from './codec.js';
import { assertOpenable, configure, migrate, needsSharedMemory, openDb, othersHistory, readonlyCopy, storeError, useWal } from './sqlite-file.js';
import {
  contextColumns,
  eventFromRow,
  groupValues,
  modelFromRow,
  modelInfoFromRow,
  modelSpecFromRow,
  runFromRow,
  runParams,
  studyFromRow,
  trialFromRow,
  type Row,
  type ValueRow,
} from './sqlite-rows.js';
import { prepare, type Statements } from './sqlite-statements.js';
import { LmBenchError } from '../errors.js';
import { adoptedIdentity, contextChange, contextOf, DEFAULT_RUN_META, describeContext, newRunContext } from './records.js';
import { registerStoredGpus } from './adopt-gpu.js';
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
  RunContext,
  RunOutcome,
  RunRecord,
  StoreOptions,
  StoreRunsOptions,
  StoredModelSpec,
} from './records.js';

type Db = Database.Database;

/**
 * The history store: benchmark runs, studies and their trials, trained surrogate models and an event
 * log, in SQLite on better-sqlite3. After Optuna's `BaseStorage` (`optuna/storages/_base.py`); its
 * contract is tested in `test/store/store.contract.ts`. Tests and benches open it on ':memory:' (or a
 * temporary file where a worker thread must open the same database by path).
 *
 * Invariants it keeps:
 * - **Finished trials are immutable.** Once a trial is `complete`, `failed` or `pruned`, every write to
 *   it throws LMB_ERR_TRIAL_FINISHED (Optuna's `check_trial_is_updatable`).
 * - **Every state change is one transaction.** A trial's state, values, result, timing and failure
 *   reason change together or not at all; `storeRuns` stores all of its runs or none of them.
 * - **Returned objects never change under later writes.** Every read and every write returns a fresh
 *   copy; callers may mutate what they get without affecting the store, and vice versa.
 * - **Time is passed in.** Timestamps come from `StoreOptions.now()` (epoch milliseconds), never from
 *   the clock directly, so a study can be replayed.
 * - **Numbers are stored faithfully.** ±Infinity and NaN in trial values, results, attributes and
 *   payloads come back as they went in, and so does -0 in results, attributes and payloads (a trial
 *   value of -0 comes back 0: SQLite's REAL column keeps no sign of zero); `null` stays `null` and an
 *   absent key stays absent.
 * - **One measurement, one context.** A run's content hash names its figures; `storeRuns` refuses the
 *   same figures under another GPU, GPU count, model or server config, or replaces the stored context
 *   when asked, and never keeps two.
 * - **One writer.** The store is synchronous; one process writes (design: the service or the study
 *   process), others may read. A connection is not shared across worker threads: a worker opens the
 *   file by path.
 *
 * Missing ids throw LMB_ERR_NOT_FOUND (trials, runs, models) or LMB_ERR_STUDY_NOT_FOUND (studies);
 * driver failures throw LMB_ERR_STORE_FAILED with the driver error as `cause`.
 *
 * Opened in WAL mode with foreign keys on and a busy timeout; every statement is prepared once, in the
 * constructor; every public call runs inside `#tx` (writes as BEGIN IMMEDIATE, so a second process
 * waits for the lock instead of failing on upgrade), which is where driver errors become
 * LMB_ERR_STORE_FAILED.
 */
export class SqliteStore {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #s: Statements;
  readonly #name: string;

  /**
   * Use `openStore`; this takes an open connection and migrates it. `name` is the file the connection
   * reads, for messages, when that is not `db.name` (a read-only copy in memory).
   */
  constructor(db: Db, options: StoreOptions, name: string = db.name) {
    this.#db = db;
    this.#now = options.now;
    this.#name = name;
    try {
      configure(db);
      // Checked before WAL is switched on: a file this lm-bench refuses is left byte for byte as it was.
      assertOpenable(db, name);
      if (!db.readonly) useWal(db);
      migrate(db, name);
      this.#s = prepare(db);
    } catch (err) {
      db.close();
      throw storeError(err, `open ${name}`);
    }
  }

  /** The file path (":memory:" for an in-memory database). */
  get path(): string {
    return this.#name;
  }

  /* studies */

  /**
   * Creates a study, or returns the existing one when a study of that name already exists with an
   * identical spec (so a restarted `lm-bench tune` resumes it). A different spec under the same name
   * throws LMB_ERR_STUDY_EXISTS.
   */
  createStudy(spec: StudySpec): Study {
    return this.#tx('createStudy', true, () => {
      const existing = this.#findStudy(spec.name);
      if (existing) {
        if (!sameSpec(existing.spec, spec)) throw studyExists(spec.name);
        return existing;
      }
      const now = this.#now();
      const { lastInsertRowid } = this.#s.insertStudy.run({ name: spec.name, spec: encodeJson(spec), now });
      return this.#studyOrThrow(Number(lastInsertRowid));
    });
  }

  /** By numeric id or by name; throws LMB_ERR_STUDY_NOT_FOUND. */
  getStudy(idOrName: number | string): Study {
    return this.#tx('getStudy', false, () => this.#studyOrThrow(idOrName));
  }

  /** By numeric id or by name; null when there is none. */
  findStudy(idOrName: number | string): Study | null {
    return this.#tx('findStudy', false, () => this.#findStudy(idOrName));
  }

  /** All studies, oldest first. */
  listStudies(): Study[] {
    return this.#tx('listStudies', false, () => this.#s.allStudies.all().map((r) => studyFromRow(r as Row)));
  }

  setStudyState(studyId: number, state: StudyState): Study {
    return this.#tx('setStudyState', true, () => {
      this.#studyOrThrow(studyId);
      this.#s.updateStudyState.run({ id: studyId, state, now: this.#now() });
      return this.#studyOrThrow(studyId);
    });
  }

  /* trials */

  /** A new trial numbered after the study's last one (0-based). `state` defaults to `waiting`. */
  createTrial(studyId: number, init: NewTrial): Trial {
    return this.#tx('createTrial', true, () => {
      this.#studyOrThrow(studyId);
      return this.#trialOrThrow(this.#insertTrial(studyId, init));
    });
  }

  /**
   * Atomically takes the study's oldest waiting trial and marks it running (started_at and heartbeat
   * set to now), so two executors never run the same trial. Null when none is waiting.
   */
  claimWaitingTrial(studyId: number): Trial | null {
    return this.#tx('claimWaitingTrial', true, () => {
      this.#studyOrThrow(studyId);
      const row = this.#s.oldestWaiting.get(studyId) as { id: number } | undefined;
      if (!row) return null;
      return this.#start(row.id);
    });
  }

  /** waiting → running. Throws LMB_ERR_TRIAL_FINISHED when finished, LMB_ERR_INVALID_ARGUMENT when already running. */
  startTrial(trialId: number): Trial {
    return this.#tx('startTrial', true, () => this.#start(trialId));
  }

  /** Records that a running trial is alive (heartbeat_at = now). */
  heartbeat(trialId: number): void {
    this.#tx('heartbeat', true, () => {
      assertUpdatable(this.#trialOrThrow(trialId));
      this.#s.heartbeat.run({ id: trialId, now: this.#now() });
    });
  }

  /** Merges attributes into an unfinished trial (a key set to undefined is left as it was). */
  setTrialAttrs(trialId: number, attrs: Record<string, unknown>): Trial {
    return this.#tx('setTrialAttrs', true, () => {
      const t = this.#trialOrThrow(trialId);
      assertUpdatable(t);
      const merged = { ...t.attrs };
      for (const [k, v] of Object.entries(attrs)) if (v !== undefined) merged[k] = v;
      this.#s.updateAttrs.run({ id: trialId, attrs: encodeJson(merged) });
      return this.#trialOrThrow(trialId);
    });
  }

  /** → complete, with its objective values and the measured result. */
  completeTrial(trialId: number, outcome: CompleteOutcome): Trial {
    return this.#tx('completeTrial', true, () =>
      this.#finish(trialId, 'complete', { values: outcome.values, result: outcome.result, reason: null, started: true }),
    );
  }

  /** → failed; `started: false` marks a launch failure the feasibility model learns from. */
  failTrial(trialId: number, outcome: FailOutcome): Trial {
    return this.#tx('failTrial', true, () =>
      this.#finish(trialId, 'failed', {
        values: outcome.values ?? {},
        result: outcome.result ?? null,
        reason: outcome.reason,
        started: outcome.started,
      }),
    );
  }

  /** → pruned (stopped early on purpose). */
  pruneTrial(trialId: number, outcome: PruneOutcome = {}): Trial {
    return this.#tx('pruneTrial', true, () =>
      this.#finish(trialId, 'pruned', {
        values: outcome.values ?? {},
        result: outcome.result ?? null,
        reason: outcome.reason ?? null,
        started: true,
      }),
    );
  }

  /**
   * Heartbeat recovery (Optuna `fail_stale_trials` + `RetryFailedTrialCallback`): every running trial
   * of the study whose last heartbeat (or start, if it never beat) is before `staleBeforeMs` is marked
   * failed with reason "stale: no heartbeat since …" and `started: null` (unknown), and a fresh waiting
   * trial with the same config, origin `enqueued` and attrs `{ retry_of: <old id> }` is created for
   * each. One transaction for the lot. Trials in `keep` are left running (a controller that
   * reattached to their Slurm jobs follows them).
   */
  requeueStaleTrials(studyId: number, staleBeforeMs: number, keep: readonly number[] = []): RequeueReport {
    return this.#tx('requeueStaleTrials', true, () => {
      this.#studyOrThrow(studyId);
      const ids = (this.#s.staleRunning.all({ study: studyId, before: staleBeforeMs }) as { id: number }[]).map((r) => r.id).filter((id) => !keep.includes(id));
      const failed: Trial[] = [];
      const requeued: Trial[] = [];
      for (const id of ids) {
        const t = this.#trialOrThrow(id);
        failed.push(this.#finish(id, 'failed', { values: {}, result: null, reason: staleReason(t), started: null }));
        const newId = this.#insertTrial(studyId, { config: t.config, origin: 'enqueued', attrs: { retry_of: t.id } });
        requeued.push(this.#trialOrThrow(newId));
      }
      return { failed, requeued };
    });
  }

  getTrial(trialId: number): Trial {
    return this.#tx('getTrial', false, () => this.#trialOrThrow(trialId));
  }

  /** The study's trials in number order, optionally only those in the given states. */
  listTrials(studyId: number, filter: { states?: readonly TrialState[] } = {}): Trial[] {
    return this.#tx('listTrials', false, () => {
      this.#studyOrThrow(studyId);
      const states = filter.states === undefined ? null : JSON.stringify(filter.states);
      const rows = this.#s.studyTrials.all({ study: studyId, states }) as Row[];
      const values = groupValues(this.#s.studyValues.all(studyId) as ValueRow[]);
      return rows.map((r) => trialFromRow(r, values.get(r['id'] as number) ?? {}));
    });
  }

  /* runs */

  /**
   * The one write of runs: several in one transaction (ingest of one file, a study's trial), all stored
   * or — when anything throws — none. Each is stored as new or found already stored (its content hash,
   * in the history or earlier in the batch) with the same context — GPU, GPU count, model, server
   * config. A run whose figures are stored under another context is a conflict, since one measurement
   * has one context and one of the two is wrong: the whole batch is refused (LMB_ERR_INGEST_REJECTED,
   * nothing written) naming the stored runs and what differs, `details.runs` their ids (figures given
   * twice in the batch under two contexts are named by their hash, `details.repeated`). With `replace`,
   * the stored run takes the new context instead: its id, figures, workload and provenance stay, the
   * context it had goes into its notes. `change` says how two contexts differ, or null where they are
   * one (default: knob by knob as written, `contextChange`; ingest reads an unset knob as vLLM's default
   * for the GPU and model; a study's trial calls any run stored under its hash its own, tune/history.ts).
   */
  storeRuns(runs: readonly NewRun[], options: StoreRunsOptions = {}): RunOutcome[] {
    const change = options.change ?? ((stored: RunContext, given: RunContext) => contextChange(stored, given, 'this ingest'));
    return this.#tx('storeRuns', true, () => {
      const now = this.#now();
      const conflicts: RunConflict[] = [];
      // Rolled back with the batch on a conflict: such a run is named by its hash, not an id that will not exist.
      const added = new Set<number>();
      const outcomes = runs.map((run): RunOutcome => {
        const id = this.#insertRun(run, now);
        if (id !== null) {
          added.add(id);
          return { status: 'new', id };
        }
        const row = this.#s.runByHash.get(run.contentHash) as Row | undefined;
        if (row === undefined) throw new LmBenchError('LMB_ERR_STORE_FAILED', `run ${run.contentHash} neither inserted nor found`);
        const stored = runFromRow(row);
        const was = contextOf(stored);
        const given = newRunContext(run);
        const diff = change(was, given);
        if (diff === null) return { status: 'duplicate', id: stored.id };
        if (options.replace !== true) {
          conflicts.push({ id: added.has(stored.id) ? null : stored.id, hash: run.contentHash, change: diff });
          return { status: 'duplicate', id: stored.id };
        }
        this.#replaceContext(stored, was, given, now);
        return { status: 'replaced', id: stored.id, was };
      });
      // Thrown inside the transaction, so the runs inserted before the conflict are rolled back.
      if (conflicts.length > 0) throw runContextConflict(conflicts);
      return outcomes;
    });
  }

  getRun(runId: number): RunRecord {
    return this.#tx('getRun', false, () => {
      const row = this.#s.runById.get(runId) as Row | undefined;
      if (!row) throw notFound('run', runId);
      return runFromRow(row);
    });
  }

  /** Newest first (by id). */
  listRuns(filter: RunFilter = {}): RunRecord[] {
    return this.#tx('listRuns', false, () =>
      (this.#s.listRuns.all({ ...runParams(filter), limit: filter.limit ?? -1, offset: filter.offset ?? 0 }) as Row[]).map(runFromRow),
    );
  }

  countRuns(filter: Omit<RunFilter, 'limit' | 'offset'> = {}): number {
    return this.#tx('countRuns', false, () => (this.#s.countRuns.get(runParams(filter)) as { n: number }).n);
  }

  /* models */

  /**
   * Saves a model. With a `slot`, the model that held the slot (if any) is deleted in the same
   * transaction: a study keeps one current surrogate, not one per refit.
   */
  saveModel(model: NewModel): ModelRecord {
    return this.#tx('saveModel', true, () => {
      if (model.slot !== undefined) this.#s.clearModelSlot.run(model.slot);
      const { lastInsertRowid } = this.#s.insertModel.run({
        kind: model.kind,
        slot: model.slot ?? null,
        blob: Buffer.from(model.blob.buffer, model.blob.byteOffset, model.blob.byteLength),
        metadata: encodeJson(model.metadata),
        metrics: encodeJson(model.metrics),
        size: model.blob.byteLength,
        now: this.#now(),
      });
      return modelFromRow(this.#s.modelById.get(Number(lastInsertRowid)) as Row);
    });
  }

  getModel(modelId: number): ModelRecord {
    return this.#tx('getModel', false, () => {
      const row = this.#s.modelById.get(modelId) as Row | undefined;
      if (!row) throw notFound('model', modelId);
      return modelFromRow(row);
    });
  }

  /** The most recently saved model of a kind, or null. */
  latestModel(kind: string): ModelRecord | null {
    return this.#tx('latestModel', false, () => {
      const row = this.#s.latestModel.get(kind) as Row | undefined;
      return row ? modelFromRow(row) : null;
    });
  }

  /** Newest first, without the blobs. */
  listModels(kind?: string): ModelInfo[] {
    return this.#tx('listModels', false, () => (this.#s.listModels.all({ kind: kind ?? null }) as Row[]).map(modelInfoFromRow));
  }

  /* model specs */

  /**
   * Records the LLM spec a study or run names (`resolveModel`'s answer) and returns the spec to use:
   * a catalog model (`config_hash` null) as it is, with no row; a new id stored as given; an id stored
   * with the same config hash, the stored spec; an id stored with another hash (a second checkpoint
   * of one name), the spec under `ID@HASH8` (stored on first sight), so the two never share a history.
   */
  adoptModelSpec(model: NewModelSpec): ModelSpec {
    const hash = model.config_hash;
    if (hash === null) return model.spec;
    return this.#tx('adoptModelSpec', true, () => {
      const find = (id: string): StoredModelSpec | null => {
        const row = this.#s.modelSpecById.get(id) as Row | undefined;
        return row ? modelSpecFromRow(row) : null;
      };
      const { id, stored } = adoptedIdentity(find, { ...model, config_hash: hash });
      if (stored !== null) return stored.spec;
      const spec = { ...model.spec, id };
      this.#s.insertModelSpec.run({ id, spec: encodeJson(spec), hash, origin: model.origin, location: model.location, now: this.#now() });
      return spec;
    });
  }

  /** Every stored spec, oldest first. */
  listModelSpecs(): StoredModelSpec[] {
    return this.#tx('listModelSpecs', false, () => (this.#s.allModelSpecs.all() as Row[]).map(modelSpecFromRow));
  }

  /* events */

  appendEvent(event: NewEvent): EventRecord {
    return this.#tx('appendEvent', true, () => {
      if (event.studyId !== null) this.#studyOrThrow(event.studyId);
      const { lastInsertRowid } = this.#s.insertEvent.run({
        study: event.studyId,
        kind: event.kind,
        payload: encodeJson(event.payload === undefined ? null : event.payload),
        now: this.#now(),
      });
      return eventFromRow(this.#s.eventById.get(Number(lastInsertRowid)) as Row);
    });
  }

  /** Oldest first. */
  listEvents(filter: EventFilter = {}): EventRecord[] {
    return this.#tx('listEvents', false, () =>
      (
        this.#s.listEvents.all({
          anyStudy: filter.studyId === undefined ? 1 : 0,
          study: filter.studyId ?? null,
          kind: filter.kind ?? null,
          after: filter.afterId ?? null,
          limit: filter.limit ?? -1,
        }) as Row[]
      ).map(eventFromRow),
    );
  }

  /** Releases the database; any later call throws LMB_ERR_STORE_FAILED. Idempotent. */
  close(): void {
    if (this.#db.open) this.#db.close();
  }

  /* internals (called inside #tx) */

  /**
   * The one transaction helper: runs `fn` in a transaction (IMMEDIATE for writes), commits, or rolls
   * back on any throw. LmBenchErrors pass through unchanged; driver errors become LMB_ERR_STORE_FAILED.
   */
  #tx<T>(op: string, write: boolean, fn: () => T): T {
    try {
      const t = this.#db.transaction(fn);
      return write ? t.immediate() : t.deferred();
    } catch (err) {
      throw storeError(err, op);
    }
  }

  /** The new run's id, or null when its content hash is already stored (nothing written). */
  #insertRun(run: NewRun, now: number): number | null {
    const info = this.#s.insertRun.run({
      content_hash: run.contentHash,
      source_format: run.sourceFormat,
      source_path: run.sourcePath,
      ...contextColumns(newRunContext(run)),
      workload: run.workload === null ? null : encodeJson(run.workload),
      result: encodeJson(run.result),
      meta: encodeJson(run.meta ?? DEFAULT_RUN_META),
      now,
    });
    // ON CONFLICT (content_hash) DO NOTHING: zero changes means the hash was already stored.
    return info.changes === 0 ? null : Number(info.lastInsertRowid);
  }

  /** `stored` takes the `given` context, in its columns and in the copy its result holds; a note keeps the old one, `was`. */
  #replaceContext(stored: RunRecord, was: RunContext, given: RunContext, now: number): void {
    const result = { ...stored.result };
    // An ingested result carries its context (resolveRun); one that carries none is left so.
    if (result.server_config !== null) result.server_config = given.server_config;
    if (result.hardware !== null) result.hardware = given.hardware;
    if (result.model !== null) result.model = given.model;
    const note = `context replaced ${new Date(now).toISOString()} (ingest --replace): was ${describeContext(was)}`;
    this.#s.replaceRunContext.run({
      id: stored.id,
      ...contextColumns(given),
      result: encodeJson(result),
      meta: encodeJson({ ...stored.meta, notes: [...stored.meta.notes, note] }),
    });
  }

  #findStudy(idOrName: number | string): Study | null {
    const row = (typeof idOrName === 'number' ? this.#s.studyById.get(idOrName) : this.#s.studyByName.get(idOrName)) as Row | undefined;
    return row ? studyFromRow(row) : null;
  }

  #studyOrThrow(idOrName: number | string): Study {
    const s = this.#findStudy(idOrName);
    if (!s) throw studyNotFound(idOrName);
    return s;
  }

  #trialOrThrow(trialId: number): Trial {
    const row = this.#s.trialById.get(trialId) as Row | undefined;
    if (!row) throw notFound('trial', trialId);
    return trialFromRow(row, groupValues(this.#s.trialValues.all(trialId) as ValueRow[]).get(trialId) ?? {});
  }

  #insertTrial(studyId: number, init: NewTrial): number {
    const now = this.#now();
    const running = init.state === 'running';
    const { n } = this.#s.nextNumber.get(studyId) as { n: number };
    const { lastInsertRowid } = this.#s.insertTrial.run({
      study: studyId,
      number: n,
      state: running ? 'running' : 'waiting',
      origin: init.origin,
      config: encodeJson(init.config),
      attrs: encodeJson(init.attrs ?? {}),
      now,
      started_at: running ? now : null,
    });
    return Number(lastInsertRowid);
  }

  #start(trialId: number): Trial {
    assertWaiting(this.#trialOrThrow(trialId));
    this.#s.startTrial.run({ id: trialId, now: this.#now() });
    return this.#trialOrThrow(trialId);
  }

  #finish(
    trialId: number,
    state: 'complete' | 'failed' | 'pruned',
    o: { values: Record<string, number | null>; result: Trial['result']; reason: string | null; started: boolean | null },
  ): Trial {
    assertUpdatable(this.#trialOrThrow(trialId));
    this.#s.finishTrial.run({
      id: trialId,
      state,
      result: o.result === null ? null : encodeJson(o.result),
      reason: o.reason,
      started: o.started === null ? null : o.started ? 1 : 0,
      now: this.#now(),
    });
    this.#s.deleteValues.run(trialId);
    for (const [objective, v] of Object.entries(o.values)) {
      const { value, valueType } = valueToStored(v);
      this.#s.insertValue.run({ trial: trialId, objective, value, type: valueType });
    }
    return this.#trialOrThrow(trialId);
  }
}

export interface OpenStoreOptions {
  /** Defaults to Date.now: the edge that opens the store is where the clock is read. */
  readonly now?: () => number;
  readonly readonly?: boolean;
}

/**
 * Opens (creating the file and its folder on demand) and migrates the SQLite store at `path`. Every LLM
 * spec the history stored is registered with the catalog (`registerModel`), so the synchronous
 * lookups of training, `recommend`, the report, the service and its workers find the runs and studies
 * of models that are not in data/models.yaml, as they were stored; likewise every GPU datasheet a study
 * carries (`registerStoredGpus`). Read-only, a history this user cannot write (the file, or the folder
 * its `-shm` index would go in) is read from a copy in memory (`readonlyCopy`).
 */
export function openStore(path: string, options: OpenStoreOptions = {}): SqliteStore {
  // A file this user may not write is opened read-only, as SQLite itself would (its first write then
  // fails), but through lm-bench's read-only path, which leaves no -wal or -shm behind (othersHistory).
  const others = othersHistory(path);
  const readonly = options.readonly === true || others;
  const storeOptions = { now: options.now ?? Date.now };
  const fromCopy = (): SqliteStore => new SqliteStore(readonlyCopy(path), storeOptions, path);
  let store: SqliteStore;
  // With a writer at work (a -wal beside it) the file is not the whole history: SQLite reads it.
  if (others && !existsSync(`${path}-wal`)) {
    store = fromCopy();
  } else {
    try {
      store = new SqliteStore(openDb(path, readonly), storeOptions);
    } catch (err) {
      if (!readonly || !needsSharedMemory(err)) throw err;
      store = fromCopy();
    }
  }
  for (const m of store.listModelSpecs()) registerModel(m.spec, m.config_hash);
  registerStoredGpus(store);
  return store;
}

/**
 * `LMB_DB`, else `.lm-bench/lm-bench.db` under the working directory. A relative `LMB_DB` is resolved
 * against the command's working directory, as `--db` is, not the process's.
 */
export function defaultDbPath(io: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> }): string {
  const fromEnv = io.env['LMB_DB'];
  return fromEnv !== undefined && fromEnv !== '' ? resolve(io.cwd, fromEnv) : join(io.cwd, '.lm-bench', 'lm-bench.db');
}
