/**
 * How the saturation verdict (src/metrics/saturation.ts) reads catalog cases near and past what they
 * sustain: each case's throughput on a 600-request burst, then Poisson runs at multiples of it (40 s of
 * arrivals, at least 400 requests), six seeds each, on the simulator's default profile. Prints a Markdown
 * table: per multiple, how many seeds were flagged and the range of sustained ÷ offered, flagged and not.
 *
 *   node --import tsx scripts/saturation-check.ts      # a few minutes on two cores
 */
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { Workload, type ServerConfig } from '../src/domain/index.js';
import { simulateSummary } from '../src/sim/index.js';
import { loadYamlFile } from '../src/util/yaml.js';

const catalog = defaultCatalog();
const SEEDS = [0, 1, 2, 3, 4, 5];
const MULTIPLES = [0.5, 0.9, 0.95, 1.3, 1.5, 1.7, 1.9, 2, 3];
const CASES: readonly { workload: string; model: string; gpus: number; config: ServerConfig }[] = [
  { workload: 'chat', model: 'llama-3.1-8b', gpus: 1, config: {} },
  { workload: 'code', model: 'qwen3-14b', gpus: 1, config: {} },
  { workload: 'chat', model: 'mixtral-8x7b', gpus: 2, config: { tensor_parallel_size: 2 } },
  { workload: 'chat', model: 'llama-3.1-70b', gpus: 4, config: { tensor_parallel_size: 4 } },
];

const range = (xs: number[]): string => (xs.length === 0 ? '–' : `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`);
const rows: string[] = ['| model, workload, GPUs | × burst | req/s | flagged | sustained ÷ offered, flagged | undecided (too short to tell) | sustained ÷ offered, undecided | kept up |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
for (const c of CASES) {
  const w = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', `${c.workload}.yaml`), Workload);
  const hardware = { gpu: 'H100-SXM', count: c.gpus };
  const burst = simulateSummary({ config: c.config, hardware, model: c.model, workload: { ...w, arrival: { kind: 'burst' }, num_prompts: 600 }, seed: 0, catalog, runtimeFailures: false });
  if (!burst.ok) throw new Error(`${c.model}: the burst run failed`);
  const cap = burst.summary.requestThroughput;
  for (const f of MULTIPLES) {
    const rate = cap * f;
    const flagged: number[] = [];
    const kept: number[] = [];
    const undecided: number[] = [];
    for (const seed of SEEDS) {
      const out = simulateSummary({ config: c.config, hardware, model: c.model, workload: { ...w, arrival: { kind: 'poisson', rate_rps: rate }, num_prompts: Math.max(400, Math.round(rate * 40)) }, seed, catalog, runtimeFailures: false });
      const s = out.ok ? out.summary.saturation : null;
      if (s === null || s === undefined) continue;
      (s.saturated ? flagged : s.undecided ? undecided : kept).push(s.sustainedRps / s.offeredRps);
    }
    rows.push(`| ${c.model}, ${c.workload}, ${c.gpus}× H100 | ${f} | ${rate.toFixed(1)} | ${flagged.length} of ${flagged.length + undecided.length + kept.length} | ${range(flagged)} | ${undecided.length} | ${range(undecided)} | ${range(kept)} |`);
    process.stderr.write(`${rows.at(-1) ?? ''}\n`);
  }
}
process.stdout.write(`${rows.join('\n')}\n`);
