import type { Trial } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import type { OptimizationStudy } from '../optimize/study.js';
import type { Store } from '../store/store.js';
import type { Executor } from '../targets/executor.js';
import type { TrialInput, TrialOutcome } from '../targets/types.js';
import type { FailureRule } from '../optimize/failure-rules.js';
import type { FailureBook } from './failure-book.js';
import { backfillTrialRuns, recordTrialRun } from './history.js';

/**
 * The unattended tuning loop: rounds of ask q → run in parallel → tell, until the trial budget or
 * the time budget is spent, or the expected hypervolume improvement of the surrogate's proposals
 * stays below a threshold for several rounds. All state lives in the store: every trial state change
 * is one transaction and running trials keep a heartbeat, so a killed loop resumes where it stopped.
 */
export type StopReason = 'budget' | 'time' | 'converged' | 'interrupted' | 'exhausted';

export type TuneEvent =
  | { readonly kind: 'resumed'; readonly requeued: number; readonly kept: number }
  | { readonly kind: 'trial_started'; readonly trial: Trial }
  | { readonly kind: 'trial_finished'; readonly trial: Trial; readonly outcome: TrialOutcome }
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
  readonly measure?: (input: TrialInput, executor: Executor) => Promise<TrialOutcome>;
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
  if (t.state === 'failed') return t.attrs['stale'] !== true && !(t.failure_reason ?? '').startsWith('stale');
  return false;
}

export async function runTuneLoop(opts: TuneLoopOptions): Promise<TuneSummary> {
  const { study, store, executor, now } = opts;
  const emit = opts.onEvent ?? (() => undefined);
  const patience = opts.patience ?? 3;
  const threshold = opts.ehviThreshold ?? 1e-3;
  const measure = opts.measure ?? ((input, ex) => ex.run(input));
  // One loop per study: whatever is "running" when the loop starts was orphaned by a crash.
  const requeue = store.requeueStaleTrials(study.id, now() + 1);
  backfillTrialRuns(store, study.study);
  const kept = store.listTrials(study.id, { states: ['complete'] }).length;
  if (requeue.requeued.length > 0 || kept > 0) emit({ kind: 'resumed', requeued: requeue.requeued.length, kept });
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
  const stop = (reason: StopReason): TuneSummary => {
    store.setStudyState(study.id, reason === 'interrupted' ? 'stopped' : 'done');
    store.appendEvent({ studyId: study.id, kind: 'study_stopped', payload: { reason } });
    emit({ kind: 'stopped', reason });
    return { reason, counted: study.trials().filter(countsAgainstBudget).length, rounds };
  };

  for (;;) {
    const counted = study.trials().filter(countsAgainstBudget).length;
    if (opts.signal?.aborted === true) return stop('interrupted');
    if (counted >= opts.budgetTrials) return stop('budget');
    if (opts.deadlineMs !== null && now() >= opts.deadlineMs) return stop('time');
    const q = Math.min(executor.parallel, opts.budgetTrials - counted);
    const trials = await study.ask(q);
    if (trials.length === 0) return stop('exhausted');
    rounds++;
    // Only model-based proposals with a front to improve speak to convergence (not defaults, space-filling or fallbacks).
    const ehvis = trials.map((t) => t.attrs['ehvi_rel']).filter((v): v is number => typeof v === 'number');
    await Promise.all(trials.map((t) => runOne(t)));
    const maxRel = ehvis.length > 0 ? Math.max(...ehvis) : null;
    emit({ kind: 'round', round: rounds, maxRelEhvi: maxRel });
    if (maxRel !== null) {
      flat = maxRel < threshold ? flat + 1 : 0;
      if (flat >= patience) return stop('converged');
    }
  }

  async function runOne(trial: Trial): Promise<void> {
    emit({ kind: 'trial_started', trial });
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
      outcome = await measure(opts.trialInput(trial), executor);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      outcome = { status: 'failed', started: false, code: 'LMB_ERR_WORKER_FAILED', reason, durationMs: 0 };
    } finally {
      clearInterval(beat);
    }
    const failure = opts.failures?.classify(outcome) ?? null;
    if (failure !== null && outcome.status === 'ok') {
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
    }
    let told: Trial;
    try {
      if (outcome.status === 'ok' && outcome.attrs !== undefined) store.setTrialAttrs(trial.id, outcome.attrs);
      // A re-run of a trial a crash left behind must not keep the earlier run's class.
      if (failure !== null || trial.attrs['failure'] !== undefined) store.setTrialAttrs(trial.id, { failure });
      told =
        outcome.status === 'ok'
          ? study.tell(trial.id, { state: 'complete', result: outcome.result })
          : study.tell(trial.id, { state: 'failed', reason: outcome.reason, started: outcome.started });
    } catch (err) {
      // Another process already finished this trial (marked it stale and re-queued it): its copy runs again.
      if (isLmBenchError(err, 'LMB_ERR_TRIAL_FINISHED')) return;
      throw err;
    }
    recordTrialRun(store, study.study, told);
    store.appendEvent({ studyId: study.id, kind: 'trial_finished', payload: { trial_id: told.id, state: told.state, duration_ms: outcome.durationMs, ...(failure === null ? {} : { failure_class: failure.class }) } });
    emit({ kind: 'trial_finished', trial: told, outcome });
    if (failure !== null) {
      opts.failures?.refresh();
      announce(false);
    }
  }
}
