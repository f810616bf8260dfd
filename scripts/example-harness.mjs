#!/usr/bin/env node
// An example harness for lm-bench's command target (see docs/targets.md, "Command-target protocol").
//
// lm-bench runs this once per trial with two environment variables:
//   LMB_TRIAL_FILE   JSON: { trial_id, study, seed, config: {knob: value}, workload, hardware, model, slo }
//   LMB_RESULT_FILE  where to write a benchmark result JSON (vLLM `vllm bench serve` key names)
// Exit 0 = measured; non-zero = the configuration failed (the last stderr lines become the reason).
//
// A real harness would submit a Slurm job or a Kubernetes pod that runs `vllm serve` with the flags
// below and `lm-bench run` against it. This one measures the embedded simulator instead, so the
// example runs anywhere: it turns the trial into `lm-bench sim run` flags (argv, no shell).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const trial = JSON.parse(readFileSync(process.env.LMB_TRIAL_FILE, 'utf8'));
const workloadFile = join(mkdtempSync(join(tmpdir(), 'lmb-harness-')), 'workload.json');
writeFileSync(workloadFile, JSON.stringify(trial.workload));

const args = [
  fileURLToPath(new URL('../bin/lm-bench.js', import.meta.url)),
  'sim', 'run',
  '--gpu', trial.hardware.gpu,
  '--gpus', String(trial.hardware.count),
  '--model', trial.model,
  '--workload', workloadFile,
  '--seed', String(trial.seed),
  '--json',
  ...Object.entries(trial.config).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
];
const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
if (run.status !== 0) {
  // Pass the server's complaint on: lm-bench records it as the trial's failure reason.
  process.stderr.write(run.stderr);
  process.exit(run.status ?? 1);
}
writeFileSync(process.env.LMB_RESULT_FILE, run.stdout);
