import type { Writable } from 'node:stream';
import type { TuneEvent } from './loop.js';

/**
 * Progress of a study on stderr: a one-line bar redrawn in place on a terminal (trials done, running
 * and failed, best goodput, front size, time left), plain log lines otherwise, nothing with --json.
 */
export interface ProgressState {
  done: number;
  running: number;
  /** Of the running, how many wait in a cluster's queue (Slurm PENDING): queue time is not trial time. */
  queued: number;
  failed: number;
  bestGoodput: number | null;
  frontSize: number;
}

export interface ProgressOptions {
  readonly out: Writable & { isTTY?: boolean };
  readonly mode: 'tty' | 'lines' | 'quiet';
  readonly budget: number;
  readonly now: () => number;
  /** Reads best goodput and front size after each trial. */
  readonly snapshot: () => { bestGoodput: number | null; frontSize: number };
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export function progressLine(st: ProgressState, budget: number, leftMs: number | null, width = 20): string {
  const filled = Math.min(width, Math.round((st.done / Math.max(1, budget)) * width));
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  const best = st.bestGoodput === null ? '–' : `${st.bestGoodput.toFixed(0)} tok/s/GPU`;
  const running = st.queued > 0 ? `${st.running - st.queued} running · ${st.queued} queued` : `${st.running} running`;
  return `[${bar}] ${st.done}/${budget} trials · ${running} · ${st.failed} failed · best goodput ${best} · front ${st.frontSize} · ${leftMs === null ? 'estimating' : `~${formatDuration(leftMs)} left`}`;
}

export function createProgress(opts: ProgressOptions): { onEvent: (e: TuneEvent) => void; finish: () => void } {
  const st: ProgressState = { done: 0, running: 0, queued: 0, failed: 0, bestGoodput: null, frontSize: 0 };
  const t0 = opts.now();
  const queuedTrials = new Set<number>();
  let doneThisRun = 0;
  const left = (): number | null => (doneThisRun === 0 ? null : ((opts.now() - t0) / doneThisRun) * Math.max(0, opts.budget - st.done));
  const redraw = (): void => {
    if (opts.mode === 'tty') opts.out.write(`\r\x1b[2K${progressLine(st, opts.budget, left())}`);
  };
  const log = (text: string): void => {
    if (opts.mode === 'lines') opts.out.write(`${new Date(opts.now()).toISOString()} ${text}\n`);
  };
  return {
    onEvent(e) {
      if (opts.mode === 'quiet') return;
      switch (e.kind) {
        case 'resumed':
          st.done = e.spent;
          st.failed = e.failed;
          log(`resuming: ${e.kept} completed trial(s) kept${e.failed > 0 ? `, ${e.failed} failed` : ''}, ${e.requeued} orphaned running trial(s) re-queued${e.reattached > 0 ? `, ${e.reattached} job(s) still in the cluster reattached` : ''}`);
          break;
        case 'trial_started':
          st.running++;
          log(`trial ${e.trial.number} ${e.reattached === true ? 'reattached' : 'started'} (${e.trial.origin}) ${JSON.stringify(e.trial.config)}`);
          break;
        case 'trial_phase': {
          const was = queuedTrials.has(e.trial.id);
          if (e.phase.phase === 'queued') queuedTrials.add(e.trial.id);
          else queuedTrials.delete(e.trial.id);
          st.queued = queuedTrials.size;
          if (e.phase.phase === 'running' || !was) log(`trial ${e.trial.number} ${e.phase.phase === 'queued' ? `queued: ${e.phase.detail}` : 'running'}`);
          break;
        }
        case 'trial_left':
          st.running = Math.max(0, st.running - 1);
          queuedTrials.delete(e.trial.id);
          st.queued = queuedTrials.size;
          log(`trial ${e.trial.number} left for the next run: ${e.reason}`);
          break;
        case 'trial_finished': {
          st.running = Math.max(0, st.running - 1);
          queuedTrials.delete(e.trial.id);
          st.queued = queuedTrials.size;
          st.done++;
          doneThisRun++;
          if (e.trial.state === 'failed') st.failed++;
          const snap = opts.snapshot();
          st.bestGoodput = snap.bestGoodput;
          st.frontSize = snap.frontSize;
          // A run that lost requests says so on its line, measured or not (a failed one's reason carries the counts).
          const lost = e.outcome.status === 'ok' && e.requests != null && e.requests.lost > 0 ? `, lost ${e.requests.lost} of ${e.requests.total} requests` : '';
          const what =
            e.outcome.status === 'ok'
              ? `${e.trial.state}: ${e.outcome.result.output_throughput.toFixed(0)} tok/s, p99 TTFT ${e.outcome.result.p99_ttft_ms.toFixed(0)} ms, p99 ITL ${e.outcome.result.p99_itl_ms.toFixed(1)} ms${lost}`
              : `failed: ${e.outcome.reason.split('\n')[0] ?? ''}`;
          log(`trial ${e.trial.number} ${what}`);
          break;
        }
        case 'round':
          if (e.maxRelEhvi !== null) log(`round ${e.round}: best relative EHVI of the batch ${e.maxRelEhvi.toExponential(2)}`);
          break;
        case 'rule_learned':
          log(`${e.carried ? 'rule carried over from an earlier study' : 'learned from failure'}: ${e.rule.text}`);
          break;
        case 'stopped':
          log(`study stopped: ${e.reason}`);
          break;
      }
      redraw();
    },
    finish() {
      if (opts.mode === 'tty') opts.out.write('\n');
    },
  };
}
