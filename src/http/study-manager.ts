import { dirname, join, resolve } from 'node:path';
import type { Catalog } from '../catalog/index.js';
import type { ServerConfig, StudySpec } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { randomSampler } from '../optimize/samplers.js';
import { spaceSource } from '../optimize/space-source.js';
import { createOptimizationStudy } from '../optimize/study.js';
import type { SearchSpace } from '../space/index.js';
import type { Store } from '../store/store.js';
import { assertGpuFitsHistory } from '../store/adopt-gpu.js';
import type { StopMode } from '../targets/types.js';
import { TargetSpec } from '../targets/spec.js';
import { buildStudy, featureContext, registerStudySpecs, type StudyRunOptions } from '../tune/study-runner.js';
import { summarizeStudy, type StudySummary } from '../tune/summary.js';
import { studyRules } from '../tune/failure-book.js';
import { createRng } from '../util/rng.js';
import { startWorker, workerEntry } from '../workers/pool.js';
import type { StudyWorkerData, StudyWorkerMessage } from './study.worker.js';

/**
 * Studies the service runs in the background: one tuning loop per study, each with its own abort
 * signal. `stop` aborts (running trials finish, the study becomes `stopped`); `shutdown` aborts all
 * and waits up to a grace period, then puts the studies back to `running` so the next start of the
 * service resumes them (trials still running past the grace are re-queued by the loop on resume).
 * Which profile and sampler a study uses is kept in its `service_study` event, so a resume uses
 * the service's current profile of that name, never a command read back from the database.
 * At most `maxRunning` loops run at once (each is a thread, with its targets' trials): the rest wait
 * their turn in the order they came (`queued`), stored as `running`, so a restart queues them again.
 */
export type SamplerName = 'surrogate' | 'random';

export interface ServiceStudyInfo {
  readonly profile: string;
  readonly sampler: SamplerName;
}

export interface StudyManagerOptions {
  readonly store: Store;
  /** The store's file: each study runs in a worker thread of its own, which opens it by path. */
  readonly dbPath: string;
  readonly spacePath: string;
  readonly catalog: Catalog;
  readonly space: SearchSpace;
  readonly targets: Readonly<Record<string, TargetSpec>>;
  readonly now: () => number;
  readonly log: { info(o: object, msg: string): void; error(o: object, msg: string): void };
  /** Called for each trial a study of this service finishes (`complete` or `failed`). */
  readonly onTrialFinished?: (state: string) => void;
  /** Studies whose loops run at once; more wait their turn (default: no limit). */
  readonly maxRunning?: number;
}

/** A study waiting for a free loop: what its start needs. */
interface Queued {
  readonly spec: StudySpec;
  readonly target: TargetSpec;
  readonly sampler: SamplerName;
}

interface Active {
  /** How trials running outside lm-bench (Slurm jobs) are treated: see StopMode. */
  abort(mode: StopMode): void;
  /** Ends the loop now (a worker is terminated; trials it had running stay `running` for the resume). */
  terminate(): Promise<void>;
  readonly done: Promise<void>;
  shuttingDown: boolean;
  /** A stop or cancel was sent: the loop is winding down (running trials finish) and will end. */
  stopping: boolean;
  /** A resume came while stopping: the study starts again once this loop has ended. */
  resumeAfter: boolean;
}

export const SERVICE_STUDY_EVENT = 'service_study';

export class StudyManager {
  readonly #o: StudyManagerOptions;
  readonly #active = new Map<number, Active>();
  /** Studies waiting for a loop, first come first served (a Map iterates in insertion order). */
  readonly #queued = new Map<number, Queued>();
  #closed = false;

  constructor(options: StudyManagerOptions) {
    this.#o = options;
  }

  get running(): number {
    return this.#active.size;
  }

  isActive(studyId: number): boolean {
    return this.#active.has(studyId);
  }

  /** Loops at once; none given, no bound. */
  get #maxRunning(): number {
    return this.#o.maxRunning ?? Number.POSITIVE_INFINITY;
  }

  /** Waiting for a loop: created or resumed while `maxRunning` studies ran. */
  isQueued(studyId: number): boolean {
    return this.#queued.has(studyId);
  }

  /**
   * A profile of the config. A target that starts processes here (`vllm serve`, a harness) keeps their
   * pid files under `servers/` beside the history unless the profile names a `state_dir`, as `tune`'s do:
   * a service killed mid-trial stops what it left running when it resumes the study.
   */
  profile(name: string): TargetSpec {
    const t = this.#o.targets[name];
    if (t === undefined) {
      throw new LmBenchError('LMB_ERR_TARGET_PROFILE_UNKNOWN', `no target profile "${name}" in the service config; known: ${Object.keys(this.#o.targets).join(', ')}`, {
        details: { field: 'target', value: name },
      });
    }
    switch (t.kind) {
      case 'vllm':
      case 'command':
        return t.state_dir === undefined ? { ...t, state_dir: join(dirname(resolve(this.#o.dbPath)), 'servers') } : t;
      case 'sim':
      case 'endpoint':
      case 'slurm':
        return t;
    }
  }

  /** Enqueued configurations must lie in the space and pass its rules before any reaches an argv. */
  checkConfigs(spec: StudySpec, configs: readonly ServerConfig[]): void {
    const ctx = featureContext(spec, this.#o.catalog);
    configs.forEach((config, i) => {
      const v = this.#o.space.isFeasible(config, ctx);
      if (!v.ok) {
        throw new LmBenchError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `enqueue[${i}]: ${v.message}`, { details: { field: `enqueue[${i}]`, rule: v.rule } });
      }
    });
  }

  /** Creates the study (409 when the name exists with other settings) and starts it. */
  /**
   * The target a study runs against: the config's profile as it is now, except that a sim target
   * keeps the simulator profile bound into the study's spec when it was created.
   */
  targetOf(spec: StudySpec, info: ServiceStudyInfo): TargetSpec {
    const current = this.profile(info.profile);
    const parsed = TargetSpec.safeParse(JSON.parse(spec.target));
    return current.kind === 'sim' && parsed.success && parsed.data.kind === 'sim' ? parsed.data : current;
  }

  create(spec: StudySpec, info: ServiceStudyInfo, enqueue: readonly ServerConfig[] = [], modelSource?: StudyRunOptions['modelSource']): number {
    // A request that was in flight when shutdown began would store the study, then fail to start it (a
    // 503 that changed the store, and a study nobody runs): refuse it before anything is stored.
    if (this.#closed) throw new LmBenchError('LMB_ERR_INTERRUPTED', 'the service is shutting down');
    // Checked before the datasheet is registered (other figures under a stored id would displace the
    // stored ones in this process), and in the same synchronous run as the study's creation.
    assertGpuFitsHistory(this.#o.store, spec.hardware_spec);
    // The enqueued configurations are checked against the study's GPU, a datasheet sent with it included.
    registerStudySpecs(spec);
    const target = this.targetOf(spec, info);
    this.checkConfigs(spec, enqueue);
    const existing = this.#o.store.findStudy(spec.name);
    if (existing !== null) throw new LmBenchError('LMB_ERR_STUDY_EXISTS', `a study named "${spec.name}" already exists (id ${existing.id})`, { details: { field: 'name' } });
    // Queued as `tune --enqueue` queues them, after vLLM's defaults: buildStudy refuses, before anything is
    // stored, a queue the budget has no room for or a numerics change under keep_precision (a 400).
    const study = buildStudy({ ...this.#runOptions(spec, target, info.sampler), enqueue, ...(modelSource === undefined ? {} : { modelSource }) });
    this.#o.store.appendEvent({ studyId: study.id, kind: SERVICE_STUDY_EVENT, payload: info });
    this.#start(study.id, spec, target, info.sampler);
    return study.id;
  }

  infoOf(studyId: number): ServiceStudyInfo | null {
    const ev = this.#o.store.listEvents({ studyId, kind: SERVICE_STUDY_EVENT }).at(-1);
    const p = ev?.payload as Partial<ServiceStudyInfo> | undefined;
    if (p?.profile === undefined) return null;
    return { profile: p.profile, sampler: p.sampler === 'random' ? 'random' : 'surrogate' };
  }

  resume(idOrName: number | string): number {
    const study = this.#o.store.getStudy(idOrName);
    if (this.#queued.has(study.id)) return study.id;
    const active = this.#active.get(study.id);
    if (active !== undefined) {
      // A loop that was told to stop ends on its own, and would take this resume with it: start it
      // again once it has (its running trials finish first, as the stop promised).
      if (active.stopping) active.resumeAfter = true;
      return study.id;
    }
    const info = this.infoOf(study.id);
    if (info === null) {
      throw new LmBenchError('LMB_ERR_TARGET_PROFILE_UNKNOWN', `study "${study.spec.name}" was not created by the service; resume it with \`lm-bench tune --study ${study.spec.name}\``, {
        details: { field: 'id' },
      });
    }
    this.#start(study.id, study.spec, this.targetOf(study.spec, info), info.sampler);
    return study.id;
  }

  /** Resumes every study the store says is running (the service stopped or crashed under it). */
  resumeRunning(): number[] {
    const out: number[] = [];
    for (const s of this.#o.store.listStudies()) {
      if (s.state !== 'running' || this.#active.has(s.id) || this.#queued.has(s.id) || this.infoOf(s.id) === null) continue;
      try {
        out.push(this.resume(s.id));
      } catch (err) {
        this.#o.log.error({ err, study: s.id }, 'could not resume study');
      }
    }
    return out;
  }

  /** No new trials; running ones finish (a Slurm study's jobs run to their end). */
  stop(idOrName: number | string): number {
    const study = this.#o.store.getStudy(idOrName);
    this.#stopActive(study.id, 'finish');
    return study.id;
  }

  /** Stops now: running trials are cancelled (a Slurm study's jobs with scancel) and re-run on resume. */
  cancel(idOrName: number | string): number {
    const study = this.#o.store.getStudy(idOrName);
    this.#stopActive(study.id, 'cancel');
    return study.id;
  }

  /**
   * A stop or cancel also withdraws a resume asked for while the study was stopping. A queued study,
   * which has run nothing since it was queued, stops as its loop would have: `stopped`, interrupted.
   */
  #stopActive(studyId: number, mode: StopMode): void {
    if (this.#queued.delete(studyId)) {
      this.#o.store.setStudyState(studyId, 'stopped');
      this.#o.store.appendEvent({ studyId, kind: 'study_stopped', payload: { reason: 'interrupted' } });
      return;
    }
    const active = this.#active.get(studyId);
    if (active === undefined) return;
    active.stopping = true;
    active.resumeAfter = false;
    active.abort(mode);
  }

  summary(idOrName: number | string): StudySummary {
    const study = this.#o.store.getStudy(idOrName);
    // Priced on the study's own datasheet, whatever this process registered under its GPU id since.
    registerStudySpecs(study.spec);
    const ctx = featureContext(study.spec, this.#o.catalog);
    // A sampler is needed to build the study object; only its front is read here.
    // Configurations as vLLM resolves them on the study's GPU and model, as the tuner told them apart.
    const opt = createOptimizationStudy(this.#o.store, study.spec, randomSampler(spaceSource(this.#o.space, ctx)), createRng(study.spec.seed), { deployment: ctx });
    const stopped = this.#o.store.listEvents({ studyId: study.id, kind: 'study_stopped' }).at(-1);
    const reason = (stopped?.payload as { reason?: StudySummary['stop_reason'] } | undefined)?.reason ?? null;
    return summarizeStudy({ study, trials: opt.trials(), front: opt.bestTrials(), model: ctx.model, hardware: ctx.hardware, stopReason: study.state === 'running' ? null : reason, numericsChanges: (c) => this.#o.space.numericsChanges(c), rules: studyRules(this.#o.store, this.#o.catalog, study.id) });
  }

  /**
   * Aborts every study, waits up to `graceMs` for running trials, and marks the unfinished ones to
   * resume. `then` (closing the store) runs synchronously after the marking, so no loop can write
   * `stopped` over it in between.
   */
  async shutdown(graceMs: number, then: () => void = () => undefined): Promise<{ finished: number; left: number }> {
    this.#closed = true;
    // Queued studies stay `running` in the store: the next start queues them again.
    this.#queued.clear();
    const all = [...this.#active.entries()];
    for (const [, a] of all) {
      a.shuttingDown = true;
      // Jobs in a cluster's queue outlive the service: the next start reattaches to them.
      a.abort('detach');
    }
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), graceMs)));
    const results = await Promise.all(all.map(([, a]) => Promise.race([a.done.then(() => 'done' as const), grace])));
    clearTimeout(timer);
    await Promise.all(all.map(([, a], i) => (results[i] === 'done' ? Promise.resolve() : a.terminate())));
    for (const [id, a] of all) {
      try {
        // A study the user stopped or cancelled, still winding down when shutdown began, stays stopped (the
        // restart would otherwise resume it); one they resumed meanwhile runs again on the next start.
        const next = a.stopping && !a.resumeAfter ? 'stopped' : 'running';
        if (this.#o.store.getStudy(id).state !== 'done') this.#o.store.setStudyState(id, next);
      } catch (err) {
        this.#o.log.error({ err, study: id }, 'could not mark study for resume');
      }
    }
    then();
    const finished = results.filter((r) => r === 'done').length;
    return { finished, left: all.length - finished };
  }

  #runOptions(spec: StudySpec, target: TargetSpec, sampler: SamplerName) {
    return { store: this.#o.store, catalog: this.#o.catalog, space: this.#o.space, spec, target, now: this.#o.now, sampler };
  }

  #start(studyId: number, spec: StudySpec, target: TargetSpec, sampler: SamplerName): void {
    if (this.#closed) throw new LmBenchError('LMB_ERR_INTERRUPTED', 'the service is shutting down');
    if (this.#active.size + this.#queued.size >= this.#maxRunning) {
      this.#queued.set(studyId, { spec, target, sampler });
      // Stored as running (a new study is `created`, a resumed one `stopped`), so a restart queues it again.
      this.#o.store.setStudyState(studyId, 'running');
      this.#o.log.info({ study: studyId, ahead: this.#active.size + this.#queued.size - 1 }, 'study queued');
      return;
    }
    this.#launch(studyId, { spec, target, sampler });
  }

  #launch(studyId: number, q: Queued): void {
    const active = this.#inWorker(this.#o.dbPath, studyId, q.spec, q.target, q.sampler);
    void active.done.finally(() => {
      this.#active.delete(studyId);
      if (this.#closed) return;
      if (active.resumeAfter) {
        try {
          this.resume(studyId);
        } catch (err) {
          this.#o.log.error({ err, study: studyId }, 'could not resume study');
        }
      }
      this.#startQueued();
    });
    this.#active.set(studyId, active);
    this.#o.log.info({ study: studyId, target: q.target.kind, sampler: q.sampler }, 'study started');
  }

  /** Starts queued studies, oldest first, while loops are free. */
  #startQueued(): void {
    for (const [studyId, q] of this.#queued) {
      if (this.#active.size >= this.#maxRunning) return;
      this.#queued.delete(studyId);
      this.#launch(studyId, q);
    }
  }

  #inWorker(dbPath: string, studyId: number, spec: StudySpec, target: TargetSpec, sampler: SamplerName): Active {
    const data: StudyWorkerData = { dbPath, spacePath: this.#o.spacePath, spec, target, sampler };
    // A long-lived thread with messages both ways, not a pool's task: pool.ts only resolves its entry.
    const worker = startWorker(workerEntry(import.meta.url, 'study'), { workerData: data });
    let outcome: StudyWorkerMessage | undefined;
    worker.on('message', (m: StudyWorkerMessage) => {
      if (m.kind === 'trial_finished') this.#o.onTrialFinished?.(m.state);
      else outcome = m;
    });
    const active: Active = {
      shuttingDown: false,
      stopping: false,
      resumeAfter: false,
      abort: (mode) => worker.postMessage({ abort: mode }),
      terminate: async () => {
        await worker.terminate();
      },
      done: new Promise<void>((resolve) => {
        worker.once('error', (err) => {
          if (!active.shuttingDown) this.#o.log.error({ err, study: studyId }, 'study worker failed');
        });
        worker.once('exit', () => {
          if (outcome?.kind === 'done') this.#o.log.info({ study: studyId, reason: outcome.reason }, 'study stopped');
          else if (outcome?.kind === 'error' && !active.shuttingDown) this.#o.log.error({ study: studyId, message: outcome.message }, 'study failed');
          resolve();
        });
      }),
    };
    return active;
  }
}
