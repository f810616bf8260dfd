import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SlurmConfig } from '../../../src/targets/slurm/config.js';
import { jobFiles, jobScript, sbatchArgv } from '../../../src/targets/slurm/job-script.js';
import { gpusOf } from '../../../src/targets/slurm/slurm-executor.js';

const hostile = `it's $(touch PWNED) \`touch PWNED2\` "$HOME" ; touch PWNED3 #`;

test('the job script hands every value to bash literally: quotes, $(…), backticks and ; stay text', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-script-'));
  const files = jobFiles(join(dir, `t 1 it's`));
  mkdirSync(files.dir);
  // A stand-in lm-bench that prints its argv and the variable the script exported.
  const echo = join(dir, 'echo-argv.mjs');
  writeFileSync(echo, 'console.log(JSON.stringify({ argv: process.argv.slice(2), env: process.env.LMB_HOSTILE }));\n');
  const config = SlurmConfig.parse({ partition: 'gpu', time_limit: '10', engine: 'sim', work_dir: dir, env: { LMB_HOSTILE: hostile }, setup: ['export LMB_SETUP_RAN=yes'] });
  const file = join(files.dir, 'job.sh');
  writeFileSync(file, jobScript(config, { name: 'lmb-s-t1', comment: 'lmb-trial-1', gpus: 2, files, lmBench: [process.execPath, echo, hostile] }));
  const r = spawnSync('bash', [file], { cwd: files.dir, encoding: 'utf8', env: { ...process.env, SLURM_JOB_ID: '77' } });
  assert.equal(r.status, 0, r.stderr);
  const [said, argvLine] = r.stdout.trim().split('\n');
  // The job's output first names the job and its comment: how a restarted controller recognises it (job-finder.ts).
  assert.equal(said, 'lm-bench job 77: lmb-trial-1');
  const seen = JSON.parse(argvLine ?? '') as { argv: string[]; env: string };
  assert.deepEqual(seen.argv, [hostile, 'trial-run', '--trial', files.trial, '--result', files.result]);
  assert.equal(seen.env, hostile);
  for (const f of ['PWNED', 'PWNED2', 'PWNED3']) assert.equal(existsSync(join(files.dir, f)) || existsSync(join(dir, f)), false, `${f} was not created`);
  // The script's first line stamps when the job began on the node.
  assert.ok(Number(readFileSync(files.started, 'utf8')) > 1.7e12);
});

test("sbatch gets the standard options as argv, the trial's GPUs as --gres, and the extra lines as #SBATCH", () => {
  const config = SlurmConfig.parse({ partition: 'a100', time_limit: '1-00:00:00', engine: 'vllm', work_dir: '/shared/lmb', account: 'proj-42', qos: 'high', constraint: 'a100&ib', gres: 'gpu:a100:{gpus}', extra_sbatch: ['--exclusive', '--mem=0'] });
  const files = jobFiles('/shared/lmb/s/t3');
  const req = { name: 'lmb-s-t3', comment: 'lmb-trial-9', gpus: gpusOf({ config: { tensor_parallel_size: 2, data_parallel_size: 2 } } as never), files, lmBench: ['lm-bench'] };
  const argv = sbatchArgv(config, req);
  assert.equal(argv[0], 'sbatch');
  assert.ok(argv.includes('--gres=gpu:a100:4'), argv.join(' '));
  for (const want of ['--partition=a100', '--time=1-00:00:00', '--account=proj-42', '--qos=high', '--constraint=a100&ib', '--job-name=lmb-s-t3', '--comment=lmb-trial-9', '--output=/shared/lmb/s/t3/job-%j.out']) assert.ok(argv.includes(want), want);
  assert.equal(argv.at(-1), files.script);
  const script = jobScript(config, req);
  assert.match(script, /^#SBATCH --exclusive$/m);
  assert.match(script, /^#SBATCH --mem=0$/m);
});

test('the Slurm config refuses values that could become another option or a shell word, naming the field', () => {
  const base = { partition: 'gpu', time_limit: '30', engine: 'sim', work_dir: '/tmp/w' };
  const bad: [Record<string, unknown>, string][] = [
    [{ partition: 'gpu --exclusive' }, 'partition'],
    [{ time_limit: '1h' }, 'time_limit'],
    [{ work_dir: 'relative/dir' }, 'work_dir'],
    [{ work_dir: '/tmp/%j' }, 'work_dir'],
    [{ engine: 'docker' }, 'engine'],
    [{ gres: 'gpu:4' }, 'gres'],
    [{ extra_sbatch: ['--mem=0\n#SBATCH --exclusive'] }, 'extra_sbatch.0'],
    [{ extra_sbatch: ['rm -rf /'] }, 'extra_sbatch.0'],
    [{ setup: ['module load cuda\nrm -rf /'] }, 'setup.0'],
    [{ account: 'a;b' }, 'account'],
    [{ env: { 'BAD NAME': 'x' } }, 'env.BAD NAME'],
    [{ max_jobs: 0 }, 'max_jobs'],
    [{ queue: 'gpu' }, ''],
  ];
  for (const [patch, field] of bad) {
    const r = SlurmConfig.safeParse({ ...base, ...patch });
    assert.equal(r.success, false, JSON.stringify(patch));
    if (field !== '') assert.equal(r.error?.issues[0]?.path.join('.'), field, JSON.stringify(patch));
  }
  assert.equal(SlurmConfig.safeParse(base).success, true);
});
