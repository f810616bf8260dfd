import { createHash } from 'node:crypto';
import type { ServerConfig, Study, Trial } from '../domain/index.js';
import { meetsSlo, withoutTraceData } from '../domain/index.js';
import { configKey, type KeyDeployment } from '../optimize/sampler.js';
import { studyRanking } from '../optimize/study.js';
import type { NewRun, Store } from '../store/store.js';

/**
 * A study's measurements join the shared history: each completed trial is stored as a run, so later
 * studies, `surrogate train` and `recommend` learn from it. The content hash is derived from the study and
 * trial ids, so recording twice (a crash between the two writes, then a resume) stores it once.
 */
export function trialRunHash(study: Study, trial: Trial): string {
  return createHash('sha256').update(`lm-bench-study-trial:${study.id}:${trial.id}`).digest('hex');
}

/**
 * How `recordTrialRun` judges a run already stored under its hash: as its own, whatever its context, so
 * recording is idempotent and never stops the study. A trial's context cannot change once complete; a
 * stored run that differs holds another history's trial of the same ids, exported and ingested here
 * (export keeps the hash), and is left as it is rather than failing the loop.
 */
const sameTrialRun = (): null => null;

export function recordTrialRun(store: Store, study: Study, trial: Trial): void {
  if (trial.state !== 'complete' || trial.result === null) return;
  const run: NewRun = {
    result: trial.result,
    serverConfig: trial.config,
    hardware: study.spec.hardware,
    model: study.spec.model,
    // The run names the study's trace, if any, without its requests (they stay in the study's spec).
    workload: withoutTraceData(study.spec.workload),
    sourceFormat: 'lm_bench',
    sourcePath: `study:${study.spec.name}#${trial.number}`,
    contentHash: trialRunHash(study, trial),
  };
  store.storeRuns([run], { change: sameTrialRun });
}

/** Re-records completed trials whose run is missing (idempotent; used when a study resumes). */
export function backfillTrialRuns(store: Store, study: Study): void {
  for (const t of store.listTrials(study.id, { states: ['complete'] })) recordTrialRun(store, study, t);
}

/**
 * The best configurations the history already knows for this GPU count, model and workload name:
 * runs meeting the study's SLOs, by the study's objective (output throughput per GPU, or joules per
 * output token). They seed the study after vLLM's
 * defaults, so a tuner with history does not start from scratch. Runs of one configuration written two
 * ways (vLLM's defaults left out or spelled out) are one seed when the study's `deployment` is given.
 */
export function historySeeds(store: Store, study: Study, k: number, deployment?: KeyDeployment): ServerConfig[] {
  const spec = study.spec;
  const runs = store
    .listRuns({ gpu: spec.hardware.gpu, model: spec.model, limit: 5000 })
    .filter((r) => r.hardware.count === spec.hardware.count && (r.workload?.name ?? r.result.workload?.name) === spec.workload.name)
    .filter((r) => !r.source_path?.startsWith(`study:${spec.name}#`))
    .filter((r) => meetsSlo(spec.slo, r.result));
  // Best first by the study's own figure (throughput, or joules per token); runs lacking it go last.
  const ranking = studyRanking(spec);
  const rank = (r: (typeof runs)[number]): number => {
    const v = ranking.score(r.result);
    return v === null ? Number.NEGATIVE_INFINITY : ranking.direction === 'maximize' ? v : -v;
  };
  runs.sort((a, b) => rank(b) - rank(a) || b.result.output_throughput - a.result.output_throughput);
  const out: ServerConfig[] = [];
  const seen = new Set<string>();
  for (const r of runs) {
    const key = configKey(r.server_config, deployment);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r.server_config);
    if (out.length === k) break;
  }
  return out;
}
