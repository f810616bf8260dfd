// What the Slurm target adds to each trial on the local one-node cluster (scripts/slurm-local.sh up):
// submission → the job's first line on the node (queue + launch), lm-bench's own start in the job
// (Node.js + tsx), and the end of the trial → the controller reading its result (the job's exit,
// Slurm noticing it, and one poll). Studies on the sim engine, whose trials take ~1 s of work, so
// the overhead is most of what is measured. Writes bench/results/slurm.md.
//   node --import tsx bench/slurm-overhead.ts [--trials 12] [--poll 1,5]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { StudySpec, type Workload } from '../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../src/optimize/objectives.js';
import { loadSpace } from '../src/space/index.js';
import { openStore } from '../src/store/index.js';
import { JobResultFile } from '../src/targets/slurm/job-files.js';
import { SlurmHandle } from '../src/targets/slurm/slurm-executor.js';
import { TargetSpec } from '../src/targets/spec.js';
import { runStudy } from '../src/tune/study-runner.js';
import { median, quantile } from './lib/stats.js';

const { values: argv } = parseArgs({ options: { trials: { type: 'string' }, poll: { type: 'string' } } });
const TRIALS = Number(argv.trials ?? 12);
const POLLS = (argv.poll ?? '1,5').split(',').map(Number);
const catalog = defaultCatalog();
const spacePath = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
const space = loadSpace(spacePath);
const workload: Workload = { name: 'bench-slurm', api: 'completions', input_len: { dist: 'fixed', value: 256 }, output_len: { dist: 'fixed', value: 64 }, arrival: { kind: 'closed', concurrency: 16 }, num_prompts: 100, ignore_eos: true, slo: { ttft_p99_ms: 5000, itl_p99_ms: 200 } };

interface Row { poll: number; parallel: number; queued: number[]; boot: number[]; collect: number[]; run: number[]; wallPerTrialMs: number }
const rows: Row[] = [];
for (const poll of POLLS) {
  for (const parallel of [1, 2]) {
    const dir = mkdtempSync(join(tmpdir(), 'lmb-bench-slurm-'));
    const target = TargetSpec.parse({ kind: 'slurm', partition: 'gpu', time_limit: '10', engine: 'sim', work_dir: join(dir, 'work'), poll_interval_s: poll });
    const spec = StudySpec.parse({ name: `overhead-p${poll}-j${parallel}-${process.pid}`, space: spacePath, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo: workload.slo, objectives: [...DEFAULT_OBJECTIVES], target: JSON.stringify(target), seed: 1, budget_trials: TRIALS, budget_hours: null, parallel });
    const store = openStore(':memory:');
    const t0 = Date.now();
    const { study } = await runStudy({ store, catalog, space, spec, target, now: Date.now, sampler: 'random', keepSurrogate: false });
    const wall = Date.now() - t0;
    const row: Row = { poll, parallel, queued: [], boot: [], collect: [], run: [], wallPerTrialMs: (wall / TRIALS) * parallel };
    for (const t of study.trials()) {
      const h = SlurmHandle.parse(t.attrs['job']);
      const started = Number(readFileSync(join(h.dir, 'started_at_ms'), 'utf8'));
      const result = JobResultFile.parse(JSON.parse(readFileSync(join(h.dir, 'result.json'), 'utf8')));
      row.queued.push(h.queued_ms ?? Number.NaN);
      row.boot.push(result.began_at_ms - started);
      row.collect.push(h.collect_ms ?? Number.NaN);
      row.run.push(result.ended_at_ms - result.began_at_ms);
    }
    rows.push(row);
    rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`poll ${poll} s, ${parallel} job(s) at a time: ${TRIALS} trials in ${(wall / 1000).toFixed(1)} s\n`);
  }
}
const ms = (xs: number[]): string => `${(median(xs) / 1000).toFixed(2)} s (p90 ${(quantile(xs, 0.9) / 1000).toFixed(2)})`;
const out = [
  '# What Slurm adds per trial',
  '',
  `\`node --import tsx bench/slurm-overhead.ts --trials ${TRIALS} --poll ${POLLS.join(',')}\` on the local one-node cluster (\`scripts/slurm-local.sh up\`: Slurm 22.05, sched/builtin, one node with 4 placeholder GPUs, on this 2-core machine). Each study runs ${TRIALS} trials on the \`sim\` engine (a trial's own work, the simulation, is the "trial-run" column); median over its trials, p90 in brackets.`,
  '',
  '- **submit → start**: sbatch returning the job id → the job script\'s first line on the node (Slurm\'s scheduling and launch).',
  '- **lm-bench start in the job**: that line → `trial-run` beginning the trial (Node.js and tsx loading lm-bench; on a real node, add `setup` and vLLM\'s own start-up).',
  '- **end → result read**: `trial-run` writing the result → the controller reading it: the controller checks for the result file every 250 ms and does not wait for Slurm to mark the job COMPLETED, so this does not grow with the poll interval.',
  '',
  '| poll interval | jobs at a time | submit → start | lm-bench start in the job | trial-run | end → result read | wall time per trial slot |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map((r) => `| ${r.poll} s | ${r.parallel} | ${ms(r.queued)} | ${ms(r.boot)} | ${ms(r.run)} | ${ms(r.collect)} | ${(r.wallPerTrialMs / 1000).toFixed(2)} s |`),
  '',
  'The wall time per trial slot includes proposing the next configuration (random search here) and writing the job\'s files.',
  '',
];
writeFileSync(new URL('./results/slurm.md', import.meta.url), out.join('\n'));
process.stdout.write(out.join('\n'));
