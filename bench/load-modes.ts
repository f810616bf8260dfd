// `run --mode slo-hold` against `run --mode max-rate` on a server whose latency grows with load:
// `lm-bench sim serve` in real time (speed 1), on loopback. Each mode runs --repeats times; the
// table gives the answers, how far apart they are, and when slo-hold settled. Writes
// bench/results/load-modes.md and the plots of the first settle (docs/load-modes-*.svg).
//   node --import tsx bench/load-modes.ts [--repeats 3] [--slo ttft_p95_ms=400]
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freeLoopbackPort } from '../src/targets/slurm/trial-run.js';
import { rateTimelineSpecs, type RateTimelinePoint } from '../src/report/sweep.js';
import { renderSvg } from '../src/report/render.js';
import { median } from './lib/stats.js';

const { values: argv } = parseArgs({ options: { repeats: { type: 'string' }, slo: { type: 'string' } } });
const REPEATS = Number(argv.repeats ?? 3);
const SLO = argv.slo ?? 'ttft_p95_ms=400';
const bin = fileURLToPath(new URL('../bin/lm-bench.js', import.meta.url));
const workload = fileURLToPath(new URL('./load-modes-workload.yaml', import.meta.url));
const port = await freeLoopbackPort();
// No prefix cache: every run re-sends the workload's same seeded prompts to one long-lived server, and a warm
// cache would serve the later runs' prefills (max-rate after slo-hold) for free, so the two modes would not
// see the same server.
const server = spawn(process.execPath, [bin, 'sim', 'serve', '--model', 'llama-3.1-8b', '--gpu', 'H100-SXM', '--gpus', '1', '--port', String(port), '--startup-scale', '0', '--no-enable-prefix-caching'], { stdio: ['ignore', 'ignore', 'pipe'] });
await new Promise<void>((resolve) => server.stderr.on('data', (d: Buffer) => (d.toString().includes('listening') ? resolve() : undefined)));
const endpoint = `http://127.0.0.1:${port}/v1/completions`;

function run(mode: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, [bin, 'run', '--endpoint', endpoint, '--workload', workload, '--mode', mode, '--slo', SLO, '--json'], { encoding: 'utf8', timeout: 600_000 });
  if (r.stdout.trim() === '') throw new Error(`run --mode ${mode} wrote nothing: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const holds: { rps: number | null; settledS: number | null; reasons: string[]; timeline: RatePoint[] }[] = [];
type RatePoint = RateTimelinePoint;
const maxes: (number | null)[] = [];
try {
  for (let k = 0; k < REPEATS; k++) {
    const h = run('slo-hold');
    holds.push({ rps: h['max_sustainable_rps'] as number | null, settledS: h['settled_at_s'] as number | null, reasons: h['unreliable_reasons'] as string[], timeline: h['rate_timeline'] as RatePoint[] });
    const m = run('max-rate');
    maxes.push(m['max_rate_rps'] as number | null);
    process.stderr.write(`repeat ${k + 1}: slo-hold ${String(holds.at(-1)?.rps)} (settled ${String(holds.at(-1)?.settledS)} s), max-rate ${String(maxes.at(-1))}\n`);
  }
} finally {
  server.kill('SIGTERM');
}
const f = (x: number | null | undefined, d = 2): string => (x === null || x === undefined ? '–' : x.toFixed(d));
const rows = holds.map((h, i) => {
  const m = maxes[i] ?? null;
  const gap = h.rps !== null && m !== null ? (h.rps / m - 1) * 100 : null;
  return `| ${i + 1} | ${f(h.rps)} | ${f(h.settledS, 0)} | ${f(m)} | ${gap === null ? '–' : `${gap >= 0 ? '+' : ''}${gap.toFixed(1)}%`} | ${h.reasons.join('; ') || '–'} |`;
});
const gaps = holds.map((h, i) => (h.rps !== null && maxes[i] != null ? Math.abs(h.rps / (maxes[i]) - 1) * 100 : Number.NaN)).filter((x) => Number.isFinite(x));
const settles = holds.map((h) => h.settledS).filter((x): x is number => x !== null);
const out = [
  '# Load modes: slo-hold against max-rate',
  '',
  `\`node --import tsx bench/load-modes.ts --repeats ${REPEATS} --slo ${SLO}\`: \`lm-bench sim serve\` (Llama-3.1-8B on one simulated H100, real time, prefix caching off) on loopback, the workload \`bench/load-modes-workload.yaml\` (prompts ~1,024 tokens, answers ~64), and \`lm-bench run --mode slo-hold\` then \`--mode max-rate\` against it, each repeat. Server and client share this 2-core machine.`,
  '',
  '| repeat | slo-hold: max sustainable req/s | settled at (s) | max-rate: req/s | slo-hold vs max-rate | slo-hold said unreliable because |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
  `Median |gap| ${f(median(gaps), 1)}% (goal ≤ 10%); median settle ${f(median(settles), 0)} s (goal ≤ 60 s), ${settles.length} of ${holds.length} runs settled.`,
  '',
  'The plots of the first repeat\'s settle are in [load-modes.md](load-modes.md).',
  '',
];
writeFileSync(new URL('./results/load-modes.md', import.meta.url), out.join('\n'));
const first = holds[0];
if (first !== undefined && first.timeline.length > 0) {
  const limit = Number(SLO.split('=')[1]);
  const specs = rateTimelineSpecs(first.timeline, limit, SLO.split('=')[0] ?? 'value');
  writeFileSync(new URL('../docs/load-modes-rate.svg', import.meta.url), await renderSvg(specs.rates));
  writeFileSync(new URL('../docs/load-modes-latency.svg', import.meta.url), await renderSvg(specs.values));
}
process.stdout.write(out.join('\n'));
