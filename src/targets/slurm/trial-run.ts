import { createServer } from 'node:net';
import { registerGpu, registerModel, type Catalog } from '../../catalog/index.js';
import { loadAgainst, localServerPower } from '../factory.js';
import { costedOutcome } from '../costed.js';
import { createSimTarget } from '../sim-target.js';
import type { TrialOutcome } from '../types.js';
import { createVllmTarget } from '../vllm-target.js';
import type { JobResultFile, JobTrialFile } from './job-files.js';

/**
 * What runs inside a trial's batch job (`lm-bench trial-run`): the engine started with the trial's
 * configuration on a free loopback port, the bundled load runner against it, the server stopped.
 * The `vllm` engine is exactly the local vllm target (health wait that fails fast on an early exit,
 * crash under load detected); `sim` is the embedded simulator in virtual time.
 */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface JobTrialDeps {
  readonly catalog: Catalog;
  readonly now: () => number;
  readonly signal?: AbortSignal;
}

export async function runJobTrial(job: JobTrialFile, deps: JobTrialDeps): Promise<TrialOutcome> {
  return costedOutcome(await measureJobTrial(job, deps), deps.catalog);
}

async function measureJobTrial(job: JobTrialFile, deps: JobTrialDeps): Promise<TrialOutcome> {
  const { trial, engine } = job;
  // The node knows only the trial file: a model a config.json defined, and a GPU a datasheet defined, travel in it.
  if (trial.model_spec !== undefined) registerModel(trial.model_spec);
  if (trial.hardware_spec !== undefined) registerGpu(trial.hardware_spec);
  switch (engine.kind) {
    case 'sim':
      return createSimTarget({ catalog: deps.catalog, now: deps.now }).runTrial(trial);
    case 'vllm': {
      const servedModel = deps.catalog.model(trial.model).hf_name;
      const target = createVllmTarget({
        command: engine.command,
        port: await freeLoopbackPort(),
        servedModel,
        startupTimeoutMs: engine.startup_timeout_ms,
        echoOutput: true,
        executableFrom: "the Slurm config's vllm",
        // The job's GPUs (Slurm's CUDA_VISIBLE_DEVICES) are sampled with nvidia-smi / amd-smi when it is on PATH.
        runLoad: (baseUrl, input, signal) => loadAgainst(baseUrl, servedModel, input, signal, { power: localServerPower(deps.catalog, input, process.env) }),
        now: deps.now,
      });
      return target.runTrial(trial, deps.signal);
    }
  }
}

/** The result file's content for an outcome, with when the job's trial began and ended. */
export function jobResult(outcome: TrialOutcome, beganAtMs: number, endedAtMs: number): JobResultFile {
  if (outcome.status === 'ok') {
    return { status: 'ok', result: outcome.result, duration_ms: outcome.durationMs, began_at_ms: beganAtMs, ended_at_ms: endedAtMs, ...(outcome.attrs === undefined ? {} : { attrs: outcome.attrs }) };
  }
  return { status: 'failed', code: outcome.code, reason: outcome.reason, started: outcome.started, duration_ms: outcome.durationMs, began_at_ms: beganAtMs, ended_at_ms: endedAtMs };
}
