import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultCatalog } from '../../catalog/index.js';
import { LmBenchError } from '../../errors.js';
import { JobTrialFile } from '../../targets/slurm/job-files.js';
import { jobResult, runJobTrial } from '../../targets/slurm/trial-run.js';
import { parseYaml } from '../../util/yaml.js';
import { parseFlags, requireFlag } from '../args.js';
import type { CliIo, Command } from '../io.js';
import { usage } from '../usage/trial-run.js';



async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values: v } = parseFlags(argv, { trial: { type: 'string' }, result: { type: 'string' } });
  const trialFile = resolve(io.cwd, requireFlag(v.trial, 'trial'));
  const resultFile = resolve(io.cwd, requireFlag(v.result, 'result'));
  let text: string;
  try {
    text = readFileSync(trialFile, 'utf8');
  } catch (err) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `--trial ${trialFile} cannot be read`, { cause: err, details: { file: trialFile } });
  }
  const job = parseYaml(text, JobTrialFile, { file: trialFile });
  const began = Date.now();
  // Slurm's time limit and scancel send SIGTERM first: stop the server cleanly and say so.
  const ac = new AbortController();
  const onSignal = (): void => ac.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    io.stderr.write(`lm-bench trial-run: trial ${job.trial.trial_number ?? job.trial.trial_id} of study ${job.trial.study} on the ${job.engine.kind} engine\n`);
    const outcome = await runJobTrial(job, { catalog: defaultCatalog(), now: Date.now, signal: ac.signal });
    const body = jobResult(outcome, began, Date.now());
    // Written whole then renamed: the controller never reads half a result from the shared filesystem.
    const tmp = `${resultFile}.tmp-${process.pid}`;
    writeFileSync(tmp, `${JSON.stringify(body)}\n`);
    renameSync(tmp, resultFile);
    if (outcome.status === 'ok') {
      io.stderr.write(`lm-bench trial-run: measured ${outcome.result.completed} requests, ${outcome.result.output_throughput.toFixed(1)} output tok/s\n`);
      return 0;
    }
    io.stderr.write(`lm-bench trial-run: ${outcome.code}: ${outcome.reason}\n`);
    return ac.signal.aborted ? 130 : 3;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

export const command: Command = { name: 'trial-run', summary: 'one trial inside a batch job (what the Slurm target submits)', usage, run };
