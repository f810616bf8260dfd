import { join } from 'node:path';
import { LmBenchError } from '../../errors.js';
import type { SlurmConfig } from './config.js';

/**
 * The batch job of one trial, as text and argv (pure: no I/O). The standard options go on sbatch's
 * command line as argv, so no value is ever parsed by a shell or by sbatch's #SBATCH reader; the
 * script holds only the operator's extra #SBATCH lines, the exports, the setup lines and one `exec`
 * whose every word is single-quoted.
 */

/** Single-quotes a word for bash: nothing inside is expanded. */
export function shellQuote(word: string): string {
  if (word.includes('\0')) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'a NUL byte cannot be passed to a job script', { details: { field: 'slurm' } });
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `lmb-<study>-t<trial number>`: what squeue shows, and how a lost job id is found again. */
export function jobName(study: string, trialNumber: number): string {
  return `lmb-${study}-t${trialNumber}`;
}

/**
 * The job's comment: the trial's store id and a nonce stored with the trial before sbatch runs, so
 * a job of another study or database under the same name is never mistaken for this trial's.
 */
export function jobComment(trialId: number, nonce: string): string {
  return `lmb-trial-${trialId}-${nonce}`;
}

/** Where a trial's files live on the shared filesystem: `<work_dir>/<study>/t<number>/`. */
export function trialDir(workDir: string, study: string, trialNumber: number): string {
  return join(workDir, study, `t${trialNumber}`);
}

export interface JobFiles {
  readonly dir: string;
  /** The job's input: the trial and the engine to measure it with. */
  readonly trial: string;
  /** What `lm-bench trial-run` wrote: the outcome, measured or failed. */
  readonly result: string;
  /** The job's own output (Slurm replaces %j with the job id: one file per attempt). */
  readonly output: string;
  readonly script: string;
  /** Written by the script's first line: when the job started on the node (epoch ms). */
  readonly started: string;
}

export function jobFiles(dir: string): JobFiles {
  return {
    dir,
    trial: join(dir, 'trial.json'),
    result: join(dir, 'result.json'),
    output: join(dir, 'job-%j.out'),
    script: join(dir, 'job.sh'),
    started: join(dir, 'started_at_ms'),
  };
}

export interface JobRequest {
  readonly name: string;
  readonly comment: string;
  readonly gpus: number;
  readonly files: JobFiles;
  /** argv that runs lm-bench on the node, e.g. [node, /shared/lm-bench/bin/lm-bench.js]. */
  readonly lmBench: readonly string[];
}

export function gresFor(config: Pick<SlurmConfig, 'gres'>, gpus: number): string {
  return config.gres.replace('{gpus}', String(gpus));
}

/** sbatch's argv: every standard option as `--name=value`, one argv element each. */
export function sbatchArgv(config: SlurmConfig, req: JobRequest): string[] {
  return [
    'sbatch',
    '--parsable',
    `--job-name=${req.name}`,
    `--comment=${req.comment}`,
    `--partition=${config.partition}`,
    `--time=${config.time_limit}`,
    `--gres=${gresFor(config, req.gpus)}`,
    '--nodes=1',
    '--ntasks=1',
    `--output=${req.files.output}`,
    `--chdir=${req.files.dir}`,
    ...(config.account === undefined ? [] : [`--account=${config.account}`]),
    ...(config.qos === undefined ? [] : [`--qos=${config.qos}`]),
    ...(config.constraint === undefined ? [] : [`--constraint=${config.constraint}`]),
    req.files.script,
  ];
}

export function jobScript(config: SlurmConfig, req: JobRequest): string {
  const lines = [
    '#!/bin/bash',
    `# lm-bench trial job ${req.name} (${req.comment}); lm-bench submitted it as:`,
    `#   ${sbatchArgv(config, req).map(shellQuote).join(' ')}`,
    ...config.extra_sbatch.map((o) => `#SBATCH ${o}`),
    // When the job began on the node: the queue time ends here (the controller only polls).
    `date +%s%3N > ${shellQuote(req.files.started)}`,
    // The job's output names its comment: a controller that lost the job id (killed between sbatch
    // and storing it) tells this trial's job from another's by it, once Slurm has forgotten the job.
    `printf 'lm-bench job %s: %s\\n' "$SLURM_JOB_ID" ${shellQuote(req.comment)}`,
    ...Object.entries(config.env).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    '# setup (from the Slurm config):',
    ...config.setup,
    `exec ${[...req.lmBench, 'trial-run', '--trial', req.files.trial, '--result', req.files.result].map(shellQuote).join(' ')}`,
    '',
  ];
  return lines.join('\n');
}
