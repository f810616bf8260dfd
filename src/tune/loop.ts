import type { Trial } from '../domain/index.js';
import { isLmBenchError, LmBenchError } from '../errors.js';
import { claimStudy } from './controller-claim.js';
import type { OptimizationStudy } from '../optimize/study.js';
import { orphaned } from '../optimize/repeats.js';
import type { Store } from '../store/store.js';
import type { Executor, RunHooks, TrialInput, TrialOutcome, TrialPhase } from '../targets/types.js';
import type { FailureRule } from '../optimize/failure-rules.js';
import type { FailureBook } from './failure-book.js';
import { backfillTrialRuns, recordTrialRun } from './history.js';
import { withDiagnosis } from '../diagnose/classify.js';
import { lostReason, requestCounts, tooManyLost, type RequestCounts } from './lost-requests.js';

/**
 * The unattended tuning loop: rounds of ask q → run in parallel → tell, until the trial budget or
 * the time budget is spent, or the expected hypervolume improvement of the surrogate's proposals
 * stays below a threshold for several rounds. All state lives in the store: every trial state change
 * is one transaction and running trials keep a heartbeat, so a killed loop resumes where it stopped.
 */
export type StopReason = 'budget' | 'time' | 'converged' | 'interrupted' | 'exhausted';

export type TuneEvent =
  /**
   * `kept`: measured trials; `spent`: every trial that spent budget (measured, failed for its own reason,
   * pruned), `failed` of them failed; `reattached`: trials whose jobs (Slurm) outlived the controller and
   * are followed again.
   */
  | { readonly kind: 'resumed'; readonly requeued: number; readonly kept: number; readonly spent: number; readonly failed: number; readonly reattached: number }
  | { readonly kind: 'trial_started'; readonly trial: Trial; readonly reattached?: boolean }
  /** A trial waiting in a queue outside lm-bench, or starting to run there (Slurm). */
  | { readonly kind: 'trial_phase'; readonly trial: Trial; readonly phase: TrialPhase }
  /** Stopped with its job cancelled or left to a later controller: re-queued or reattached on resume. */
  | { readonly kind: 'trial_left'; readonly trial: Trial; readonly reason: string }
  /** `requests`: what the run sent and lost, when it ran to the end (a trial failed for its losses included). */
  | { readonly kind: 'trial_finished'; readonly trial: Trial; readonly outcome: TrialOutcome; readonly requests?: RequestCounts | null }
  | { readonly kind: 'round'; readonly round: number; readonly maxRelEhvi: number | null }
  /** A rule learned from failures (`carried`: from an earlier study of this deployment, announced at the start). */
  | { readonly kind: 'rule_learned'; readonly rule: FailureRule; readonly carried: boolean }
  | { readonly kind: 'stopped'; readonly reason: StopReason };

export interface TuneLoopOptions {
  readonly study: OptimizationStudy;
  readonly store: Store;
  readonly executor: Executor;
  readonly budgetTrials: number;
  /** Epoch ms after which no new trial starts (the --budget-hours deadline), or null. */
  readonly deadlineMs: number | null;
  readonly now: () => number;
  readonly trialInput: (trial: Trial) => TrialInput;
  /** Measures one trial; the default runs it once on the executor (the max-rate search wraps it). */
  readonly measure?: (input: TrialInput, executor: Executor, hooks?: RunHooks) => Promise<TrialOutcome>;
  readonly heartbeatMs?: number;
  /** Stop when the best relative EHVI of a round is below this for `patience` rounds in a row. */
  readonly ehviThreshold?: number;
  readonly patience?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (e: TuneEvent) => void;
  /** Classifies failures and learns rules from them; without it failures teach only the feasibility classifier. */
  readonly failures?: FailureBook;
}

export interface TuneSummary {
  readonly reason: StopReason;
  readonly counted: number;
  readonly rounds: number;
}

/** A trial that spent budget: measured, failed for a reason of its own, or pruned — not a stale orphan. */
export function countsAgainstBudget(t: Trial): boolean {
  if (t.state === 'complete' || t.state === 'pruned') return true;
  if (t.state === 'failed') return !orphaned(t);
  return false;
}

/**
 * Errors that mean the target cannot take trials at all (the cluster is gone, the endpoint does not
 * answer): the study stops, losing nothing. Recorded as the configuration's failure instead, an endpoint
 * that was down failed every trial of the budget in turn, each blamed on its configuration (and taught
 * as a rule), though no configuration had been measured.
 */
const FATAL = new Set(['LMB_ERR_SLURM_UNAVAILABLE', 'LMB_ERR_SLURM_SUBMIT_FAILED', 'LMB_ERR_ENDPOINT_UNREACHABLE']);

export async function runTuneLoop(opts: TuneLoopOptions): Promise<TuneSummary> {
  const release = claimStudy(opts.store, opts.study.id, opts.study.study.spec.name);
  try {
    // Only now that this process holds the study: a refused second controller leaves the first one's
    // servers and harnesses alone.
    opts.executor.reapLeftovers?.();
    return await loop(opts);
  } finally {
    release();
  }
}

async function loop(opts: TuneLoopOptions): Promise<TuneSummary> {
  const { study, store, executor, now } = opts;
  const emit = opts.onEvent ?? (() => undefined);
  const patience = opts.patience ?? 3;
  const threshold = opts.ehviThreshold ?? 1e-3;
  const measure = opts.measure ?? ((input, ex, hooks) => ex.run(input, hooks));
  // Trials whose jobs outlived a killed controller are followed again, not run twice.
  const reattached: { trial: Trial; outcome: Promise<TrialOutcome> }[] = [];
  if (executor.reattach !== undefined) {
    for (const t of store.listTrials(study.id, { states: ['running'] })) {
      if (t.attrs['job'] === undefined) continue;
      const r = await executor.reattach(opts.trialInput(t), t.attrs['job'], hooksFor(t));
      if (r !== null) reattached.push({ trial: t, outcome: r.outcome });
    }
  }
  // One loop per study: whatever else is "running" when the loop starts was orphaned by a crash.
  const requeue = store.requeueStaleTrials(study.id, now() + 1, reattached.map((r) => r.trial.id));
  backfillTrialRuns(store, study.study);
  const kept = store.listTrials(study.id, { states: ['complete'] }).length;
  // Failed and pruned trials spent budget too: progress counts them done, or its bar fell short of the budget.
  const spent = store.listTrials(study.id).filter(countsAgainstBudget);
  const failed = spent.filter((t) => t.state === 'failed').length;
  if (requeue.requeued.length > 0 || spent.length > 0 || reattached.length > 0) emit({ kind: 'resumed', requeued: requeue.requeued.length, kept, spent: spent.length, failed, reattached: reattached.length });
  store.setStudyState(study.id, 'running');
  const announce = (carried: boolean): void => {
    for (const rule of opts.failures?.takeNew() ?? []) {
      store.appendEvent({ studyId: study.id, kind: 'failure_rule', payload: { ...rule, carried } });
      emit({ kind: 'rule_learned', rule, carried });
    }
  };
  announce(true);

  let rounds = 0;
  let flat = 0;
  let fatal: Error | null = null;
  const inflight = new Map<number, Promise<void>>();
  const launch = (trial: Trial, outcome?: Promise<TrialOutcome>): void => {
    const p = runOne(trial, outcome)
      .catch((err: unknown) => {
        fatal ??= err instanceof Error ? err : new Error(String(err));
      })
      .finally(() => inflight.delete(trial.id));
    inflight.set(trial.id, p);
  };
  /** Waits for one running trial (all of them with `all`), then surfaces a fatal error. */
  const settle = async (all = false): Promise<void> => {
    if (inflight.size > 0) await (all ? Promise.all(inflight.values()) : Promise.race(inflight.values()));
    if (fatal !== null) {
      await Promise.all(inflight.values());
      // Stopped, not running: nothing runs it now (a service restart would resume a "running" study
      // straight into the same error); a resume, when the target is back, carries on.
      store.setStudyState(study.id, 'stopped');
      throw fatal;
    }
  };
  const stop = async (reason: StopReason): Promise<TuneSummary> => {
    await settle(true);
    store.setStudyState(study.id, reason === 'interrupted' ? 'stopped' : 'done');
    store.appendEvent({ studyId: study.id, kind: 'study_stopped', payload: { reason } });
    emit({ kind: 'stopped', reason });
    return { reason, counted: study.trials().filter(countsAgainstBudget).length, rounds };
  };
  for (const r of reattached) launch(r.trial, r.outcome);

  for (;;) {
    const counted = study.trials().filter(countsAgainstBudget).length;
    if (opts.signal?.aborted === true) return stop('interrupted');
    if (counted >= opts.budgetTrials) return stop('budget');
    if (opts.deadlineMs !== null && now() >= opts.deadlineMs) return stop('time');
    // A slot is free and the budget has room beyond what is already running.
    const q = Math.min(executor.parallel - inflight.size, opts.budgetTrials - counted - inflight.size);
    if (q <= 0) {
      await settle();
      continue;
    }
    const trials = await study.ask(q);
    if (trials.length === 0) {
      if (inflight.size === 0) return stop('exhausted');
      await settle();
      continue;
    }
    rounds++;
    // Only model-based proposals with a front to improve speak to convergence (not defaults, space-filling or fallbacks).
    const ehvis = trials.map((t) => t.attrs['ehvi_rel']).filter((v): v is number => typeof v === 'number');
    for (const t of trials) launch(t);
    // In rounds, the next batch is proposed when this one is measured; an asynchronous executor
    // (jobs in a cluster's queue) gets the next proposal as soon as any slot frees.
    if (executor.asynchronous !== true) await settle(true);
    else if (fatal !== null) await settle();
    const maxRel = ehvis.length > 0 ? Math.max(...ehvis) : null;
    emit({ kind: 'round', round: rounds, maxRelEhvi: maxRel });
    if (maxRel !== null) {
      flat = maxRel < threshold ? flat + 1 : 0;
      if (flat >= patience) return stop('converged');
    }
  }

  function hooksFor(trial: Trial): RunHooks {
    return {
      // Stored before anything waits on the job: a controller killed from here on finds it again.
      onHandle: (handle) => store.setTrialAttrs(trial.id, { job: handle }),
      onPhase: (phase) => emit({ kind: 'trial_phase', trial, phase }),
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    };
  }

  async function runOne(trial: Trial, reattachedOutcome?: Promise<TrialOutcome>): Promise<void> {
    emit({ kind: 'trial_started', trial, ...(reattachedOutcome === undefined ? {} : { reattached: true }) });
    const beat = setInterval(() => {
      // A trial finished or failed as stale elsewhere refuses heartbeats; the tell below reports it.
      try {
        store.heartbeat(trial.id);
      } catch {
        clearInterval(beat);
      }
    }, opts.heartbeatMs ?? 5000);
    let outcome: TrialOutcome;
    try {
      outcome = await (reattachedOutcome ?? measure(opts.trialInput(trial), executor, hooksFor(trial)));
    } catch (err) {
      if (isLmBenchError(err) && FATAL.has(err.code)) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      outcome = { status: 'failed', started: false, code: 'LMB_ERR_WORKER_FAILED', reason, durationMs: 0 };
    } finally {
      clearInterval(beat);
    }
    if (outcome.status === 'failed' && outcome.code === 'LMB_ERR_INTERRUPTED' && opts.signal?.aborted === true) {
      // Stopped by the study's stop, not by its configuration: left running, so a resume runs it again
      // (re-queued) or follows its job (reattached), and it costs no budget.
      emit({ kind: 'trial_left', trial, reason: outcome.reason });
      return;
    }
    if (outcome.status === 'failed' && FATAL.has(outcome.code)) {
      // Left running, like a stopped trial: a resume re-queues it, and it costs no budget.
      emit({ kind: 'trial_left', trial, reason: outcome.reason });
      throw new LmBenchError(outcome.code, `trial ${trial.number}: ${outcome.reason}; the study stopped (the same command resumes it, running this trial again)`);
    }
    const failure = opts.failures?.classify(outcome) ?? null;
    // What the run lost is kept whatever becomes of the trial, so a failed trial still says it (summary, report).
    const requests = outcome.status === 'ok' ? requestCounts(outcome.result) : null;
    if (outcome.status === 'ok' && failure?.class === 'prompt_too_long') {
      // The server ran but refused requests the configuration cannot take (prompts past max_model_len):
      // the measurement is not the workload's, so the trial failed, for a reason the rules can use.
      const refused = failure.facts['requests'] ?? outcome.result.failed;
      outcome = {
        status: 'failed',
        started: true,
        code: 'LMB_ERR_REQUESTS_REFUSED',
        reason: `${String(refused)} of ${outcome.result.completed + outcome.result.failed} requests refused: ${failure.evidence}`,
        durationMs: outcome.durationMs,
      };
    } else if (outcome.status === 'ok' && tooManyLost(outcome.result)) {
      // Lost past the limit (lost-requests.ts), whatever the cause: the survivors are not the workload, so the
      // trial failed, with the counts and the first error texts as its reason, never a clean measurement.
      outcome = { status: 'failed', started: true, code: 'LMB_ERR_REQUESTS_LOST', reason: lostReason(outcome.result), durationMs: outcome.durationMs };
    }
    let told: Trial;
    try {
      if (outcome.status === 'ok' && outcome.attrs !== undefined) store.setTrialAttrs(trial.id, outcome.attrs);
      if (requests !== null) store.setTrialAttrs(trial.id, { requests });
      // A re-run of a trial a crash left behind must not keep the earlier run's class.
      if (failure !== null || trial.attrs['failure'] !== undefined) store.setTrialAttrs(trial.id, { failure });
      told =
        outcome.status === 'ok'
          ? study.tell(trial.id, { state: 'complete', result: withDiagnosis(outcome.result, trial.config, study.study.spec.slo) })
          : study.tell(trial.id, { state: 'failed', reason: outcome.reason, started: outcome.started });
    } catch (err) {
      // Another process already finished this trial (marked it stale and re-queued it): its copy runs again.
      if (isLmBenchError(err, 'LMB_ERR_TRIAL_FINISHED')) return;
      throw err;
    }
    recordTrialRun(store, study.study, told);
    store.appendEvent({ studyId: study.id, kind: 'trial_finished', payload: { trial_id: told.id, state: told.state, duration_ms: outcome.durationMs, ...(requests === null ? {} : { requests }), ...(failure === null ? {} : { failure_class: failure.class }) } });
    emit({ kind: 'trial_finished', trial: told, outcome, requests });
    // Every finished trial can change the rules: a failure adds one, a trial that worked bounds those learned by contrast.
    opts.failures?.refresh();
    announce(false);
  }
}
