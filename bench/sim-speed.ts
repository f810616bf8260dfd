/**
 * Simulator speed: CPU time of virtual-time runs (goal: 1,000 requests of Llama-3.1-8B on 1×H100 at
 * concurrency 64 in under 0.5 s of CPU). Run: node --import tsx bench/sim-speed.ts
 * Writes bench/results/sim.md.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { DATA_DIR, PROJECT_ROOT, defaultCatalog } from '../src/catalog/index.js';
import { Workload } from '../src/domain/index.js';
import { loadYamlFile } from '../src/util/yaml.js';
import { simulate } from '../src/sim/index.js';

const catalog = defaultCatalog();
const chat = loadYamlFile(join(DATA_DIR, 'workloads', 'chat.yaml'), Workload);

interface Case {
  readonly name: string;
  readonly gpu: string;
  readonly count: number;
  readonly model: string;
  readonly config: Record<string, unknown>;
  readonly workload: Workload;
}

const cases: Case[] = [
  { name: 'chat, c=64, 1,000 requests (the goal)', gpu: 'H100-SXM', count: 1, model: 'llama-3.1-8b', config: {}, workload: { ...chat, num_prompts: 1000, arrival: { kind: 'closed', concurrency: 64 } } },
  { name: 'chat, burst of 1,000 (max_num_seqs 1024)', gpu: 'H100-SXM', count: 1, model: 'llama-3.1-8b', config: {}, workload: { ...chat, num_prompts: 1000, arrival: { kind: 'burst' } } },
  { name: 'code (prefix cache), Poisson 12/s, 1,000', gpu: 'H100-SXM', count: 1, model: 'llama-3.1-8b', config: {}, workload: { ...loadYamlFile(join(DATA_DIR, 'workloads', 'code.yaml'), Workload), num_prompts: 1000 } },
  { name: 'chat, c=256, 5,000 requests, DP 4', gpu: 'H100-SXM', count: 4, model: 'llama-3.1-8b', config: { data_parallel_size: 4 }, workload: { ...chat, num_prompts: 5000, arrival: { kind: 'closed', concurrency: 256 } } },
];

function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

// Warm up the JIT on a small run so the table measures the steady state a study sees.
simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: { ...chat, num_prompts: 200 }, seed: 0, catalog });

const rows: string[] = [];
for (const c of cases) {
  const samples: number[] = [];
  let steps = 0;
  let tokens = 0;
  for (let rep = 0; rep < 5; rep++) {
    samples.push(
      cpuMs(() => {
        const out = simulate({ config: c.config, hardware: { gpu: c.gpu, count: c.count }, model: c.model, workload: c.workload, seed: rep, catalog });
        if (!out.ok) throw new Error(out.failure.message);
        tokens = out.result.total_output_tokens;
        steps = out.result.duration;
      }),
    );
  }
  samples.sort((a, b) => a - b);
  const median = samples[2] as number;
  rows.push(`| ${c.name} | ${c.model} on ${c.count}× ${c.gpu} | ${tokens} | ${steps.toFixed(1)} | ${median.toFixed(0)} | ${(samples[0] as number).toFixed(0)}–${(samples[4] as number).toFixed(0)} |`);
  console.log(rows[rows.length - 1]);
}

const md = `# Simulator speed

CPU time (user + system) of one \`simulate()\` call in virtual time, median of 5 seeds after a JIT
warm-up, on this machine (2 cores, Node ${process.version}), ${new Date().toISOString().slice(0, 10)}, load average
${loadavg()[0]?.toFixed(1)} at the end (a busy 2-core box moves these figures by a third between runs: compare
two commits interleaved on the same machine, not against this table). Goal: the first row under 500 ms.

Reproduce: \`node --import tsx bench/sim-speed.ts\`

| case | deployment | output tokens | virtual duration (s) | CPU ms (median) | CPU ms (min–max) |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}
`;
writeFileSync(join(PROJECT_ROOT, 'bench', 'results', 'sim.md'), md);
