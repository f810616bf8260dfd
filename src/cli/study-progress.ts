import type { ModelSpec, StudySpec } from '../domain/index.js';
import { paretoFront } from '../optimize/pareto.js';
import type { Store } from '../store/store.js';
import { createProgress } from '../tune/progress.js';
import type { TuneEvent } from '../tune/loop.js';
import { summarizeStudy, type StudySummary } from '../tune/summary.js';
import type { CliIo } from './io.js';

/**
 * Progress of a study for `tune` and `demo`: a bar on a terminal, log lines otherwise, nothing with
 * --json. Best goodput and the size of the measured front (throughput per GPU vs p99 TTFT, among
 * trials meeting the SLOs) are read from the store after each trial.
 */
export function studyProgress(opts: { io: CliIo; store: Store; spec: StudySpec; model: ModelSpec; json: boolean }): { onEvent: (e: TuneEvent) => void; finish: () => void } {
  const { io, store, spec } = opts;
  return createProgress({
    out: io.stderr,
    mode: opts.json ? 'quiet' : io.stderr.isTTY === true ? 'tty' : 'lines',
    budget: spec.budget_trials,
    now: Date.now,
    snapshot: () => {
      const study = store.findStudy(spec.name);
      if (study === null) return { bestGoodput: null, frontSize: 0 };
      const s = summarizeStudy({ study, trials: store.listTrials(study.id), front: [], model: opts.model, stopReason: null });
      return progressSnapshot(s.trials);
    },
  });
}

/**
 * The best goodput so far (the most output tok/s per GPU of a trial meeting the SLOs) and the size of
 * their measured front. Not the recommendation's figure: under another objective (tokens per joule)
 * the pick is not the fastest trial, and the bar says "best goodput".
 */
export function progressSnapshot(trials: StudySummary['trials']): { bestGoodput: number | null; frontSize: number } {
  const feasible = trials.filter((t) => t.meets_slo === true && t.metrics !== null);
  const front = paretoFront(feasible.map((t) => [-(t.metrics?.output_throughput_per_gpu ?? 0), t.metrics?.p99_ttft_ms ?? 0]));
  const best = feasible.reduce<number | null>((m, t) => {
    const x = t.metrics?.output_throughput_per_gpu;
    return x === undefined || !Number.isFinite(x) ? m : m === null ? x : Math.max(m, x);
  }, null);
  return { bestGoodput: best, frontSize: front.length };
}
