import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readTraceFile } from '../src/trace/index.js';
import { startSimServe } from '../test/helpers/sim-serve.js';

/**
 * Issue 26 §4's two goals, measured:
 * 1. `lm-bench run --trace` against `lm-bench sim serve` (its own process, loopback) keeps its sends
 *    within 5 ms of the trace's schedule at 50 req/s: the Azure 2023 conversation trace sped up to a
 *    mean of 50 req/s, replayed for about `--duration-s` seconds, `--repeats` times.
 * 2. A workload derived from a trace (`workload from-trace`), simulated, reproduces the trace's own
 *    simulated mean TTFT and output throughput within 10% (`sim run --workload` against `sim run
 *    --trace`, same deployment; the derived one over 5 seeds, since it is a draw).
 * Every figure comes from the CLI as a user runs it. Writes bench/results/trace-replay.md.
 *
 *   node --import tsx bench/trace-replay.ts [--rate 50] [--duration-s 25] [--repeats 3]
 */
const { values } = parseArgs({ options: { rate: { type: 'string', default: '50' }, 'duration-s': { type: 'string', default: '25' }, repeats: { type: 'string', default: '3' } } });
const RATE = Number(values.rate);
const DURATION_S = Number(values['duration-s']);
const REPEATS = Number(values.repeats);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'lm-bench.js');
const traces = join(root, 'test', 'fixtures', 'traces');
const work = mkdtempSync(join(tmpdir(), 'lmb-trace-bench-'));

function lmBench(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LMB_LOOPBACK_ONLY: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`lm-bench ${args.join(' ')} exited ${String(code)}: ${err}`))));
  });
}

const f = (x: number, d = 2): string => x.toFixed(d);
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const say = (line: string): void => void process.stderr.write(`${line}\n`);

// 1. Send lateness at RATE req/s.
const TRACE = 'azure-conv-2023-head1500.csv';
const trace = readTraceFile(join(traces, TRACE), TRACE);
const n = trace.requests.length;
const traceRate = (n - 1) / ((trace.requests[n - 1]?.arrivalMs ?? 0) / 1000);
const speed = Number((RATE / traceRate).toFixed(3));
const limit = Math.min(n, Math.round(RATE * DURATION_S));
const serveArgs = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--seed', '1', '--startup-scale', '0'];
const runArgs = (url: string): string[] => ['run', '--endpoint', `${url}/v1/completions`, '--trace', join(traces, TRACE), '--trace-speed', String(speed), '--trace-limit', String(limit), '--json'];

interface Replay {
  readonly completed: number;
  readonly failed: number;
  readonly duration: number;
  readonly request_throughput: number;
  readonly mean_ttft_ms: number;
  readonly lmb: { readonly max_loop_lag_ms: number | null };
  readonly trace_replay: { readonly sent: number; readonly requests: number; readonly send_lateness_ms: { readonly p50: number; readonly p99: number; readonly max: number } };
}

const load = loadavg().map((x) => x.toFixed(1)).join(' / ');
const replays: Replay[] = [];
for (let k = 0; k < REPEATS; k++) {
  const sim = await startSimServe(serveArgs);
  try {
    const r = JSON.parse(await lmBench(runArgs(sim.url))) as Replay;
    replays.push(r);
    const l = r.trace_replay.send_lateness_ms;
    say(`replay ${k + 1}: sent ${r.trace_replay.sent}/${r.trace_replay.requests}, late p50 ${f(l.p50)} p99 ${f(l.p99)} max ${f(l.max)} ms`);
  } finally {
    await sim.close();
  }
}

const loadAfter = loadavg().map((x) => x.toFixed(1)).join(' / ');

// 2. Derived workload against the trace, in virtual time.
interface Sim {
  readonly mean_ttft_ms: number;
  readonly output_throughput: number;
  readonly completed: number;
}
interface Case {
  readonly label: string;
  readonly trace: string;
  readonly speed: number;
  readonly deploy: readonly string[];
  readonly deployText: string;
}
const CASES: readonly Case[] = [
  { label: 'bench replay (Azure conv, 50 req/s)', trace: TRACE, speed, deploy: ['--model', 'llama-3.2-1b', '--gpus', '1'], deployText: 'Llama-3.2-1B, 1× H100' },
  { label: 'Azure conv, as recorded (4.8 req/s)', trace: TRACE, speed: 1, deploy: ['--model', 'llama-3.1-8b', '--gpus', '1'], deployText: 'Llama-3.1-8B, 1× H100' },
  { label: 'Splitwise conv (Vidur), as recorded', trace: 'splitwise-conv-head300.csv', speed: 1, deploy: ['--model', 'llama-3.1-8b', '--gpus', '1'], deployText: 'Llama-3.1-8B, 1× H100' },
  { label: 'BurstGPT, ×200', trace: 'burstgpt-1-head400.csv', speed: 200, deploy: ['--model', 'llama-3.1-8b', '--gpus', '1'], deployText: 'Llama-3.1-8B, 1× H100' },
  { label: 'Azure code, as recorded (bursts, one 144 s gap)', trace: 'azure-code-2023-head300.csv', speed: 1, deploy: ['--model', 'llama-3.1-8b', '--gpus', '1'], deployText: 'Llama-3.1-8B, 1× H100' },
  { label: 'Mooncake conversation (prompts to 120k tokens)', trace: 'mooncake-conversation-head300.jsonl', speed: 1, deploy: ['--model', 'llama-3.1-8b', '--gpus', '4', '--set', 'tensor_parallel_size=4'], deployText: 'Llama-3.1-8B, TP4 on 4× H100' },
];
const SEEDS = [1, 2, 3, 4, 5];
const simBase = ['sim', 'run', '--gpu', 'H100-SXM', '--json'];
const rows: string[] = [];
let benchCase: { ttftErr: number; tputErr: number } | null = null;
for (const c of CASES) {
  const file = join(traces, c.trace);
  const derivedFile = join(work, `${c.trace}.yaml`);
  await lmBench(['workload', 'from-trace', file, '--trace-speed', String(c.speed), '--out', derivedFile]);
  const replayed = JSON.parse(await lmBench([...simBase, ...c.deploy, '--seed', '1', '--trace', file, '--trace-speed', String(c.speed)])) as Sim;
  const derived: Sim[] = [];
  for (const seed of SEEDS) derived.push(JSON.parse(await lmBench([...simBase, ...c.deploy, '--seed', String(seed), '--workload', derivedFile])) as Sim);
  const mean = (k: keyof Sim): number => derived.reduce((s, d) => s + d[k], 0) / derived.length;
  const ttftErr = mean('mean_ttft_ms') / replayed.mean_ttft_ms - 1;
  const tputErr = mean('output_throughput') / replayed.output_throughput - 1;
  const range = (k: 'mean_ttft_ms' | 'output_throughput'): string => `${f(Math.min(...derived.map((d) => d[k])), 1)}–${f(Math.max(...derived.map((d) => d[k])), 1)}`;
  if (benchCase === null) benchCase = { ttftErr, tputErr };
  const ok = Math.abs(ttftErr) <= 0.1 && Math.abs(tputErr) <= 0.1 ? 'yes' : 'no';
  rows.push(`| ${c.label} | ${c.deployText} | ${c.speed} | ${f(replayed.mean_ttft_ms, 1)} | ${f(mean('mean_ttft_ms'), 1)} (${range('mean_ttft_ms')}) | ${pct(ttftErr)} | ${f(replayed.output_throughput, 0)} | ${f(mean('output_throughput'), 0)} (${range('output_throughput')}) | ${pct(tputErr)} | ${ok} |`);
  say(rows[rows.length - 1] as string);
}
rmSync(work, { recursive: true, force: true });

const cpu = cpus();
const machine = `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${platform()} ${release()}, Node ${process.version}; load average (1/5/15 min) ${load} before the replays and ${loadAfter} after them, other work included; \`sim serve\` and \`run\` share these cores`;
const worst = (k: 'p50' | 'p99' | 'max'): number => Math.max(...replays.map((r) => r.trace_replay.send_lateness_ms[k]));
const within = worst('p99') <= 5;
const md = `# Trace replay: send lateness and derived workloads

\`node --import tsx bench/trace-replay.ts --rate ${RATE} --duration-s ${DURATION_S} --repeats ${REPEATS}\`

Machine: ${machine}.

## 1. \`run --trace\` against \`sim serve\` at ${RATE} req/s

The Azure 2023 conversation trace (\`test/fixtures/traces/${TRACE}\`, ${n} requests at ${f(traceRate)} req/s, inter-arrival CV 1.19)
sped up ×${speed} to a mean of ${RATE} req/s, its first ${limit} requests (about ${DURATION_S} s), replayed by

    lm-bench run --endpoint http://127.0.0.1:PORT/v1/completions --trace ${TRACE} --trace-speed ${speed} --trace-limit ${limit} --json

against \`lm-bench sim serve --gpu H100-SXM --gpus 1 --model llama-3.2-1b --startup-scale 0\` (real time, its own process,
loopback), a fresh server each repeat. Lateness is each request's send time minus its place in the trace's
schedule (its time ÷ ${speed}), over every request sent (\`trace_replay.send_lateness_ms\` in the JSON).

| repeat | sent | completed | failed | achieved req/s | mean TTFT (ms) | lateness p50 (ms) | p99 (ms) | max (ms) | client loop lag max (ms) |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${replays
  .map((r, k) => {
    const l = r.trace_replay.send_lateness_ms;
    return `| ${k + 1} | ${r.trace_replay.sent}/${r.trace_replay.requests} | ${r.completed} | ${r.failed} | ${f(r.request_throughput)} | ${f(r.mean_ttft_ms, 1)} | ${f(l.p50)} | ${f(l.p99)} | ${f(l.max)} | ${r.lmb.max_loop_lag_ms === null ? '–' : f(r.lmb.max_loop_lag_ms, 1)} |`;
  })
  .join('\n')}

Goal: sends within 5 ms of the schedule. Worst over the repeats: p50 ${f(worst('p50'))} ms, p99 ${f(worst('p99'))} ms, max ${f(worst('max'))} ms —
the p99 is ${within ? 'within' : 'NOT within'} 5 ms${worst('max') > 5 ? `; the max is not: the few sends that late coincide with the client's event loop stalling for as long (last column: garbage collection, or the OS giving the core to the server or to other work)` : ''}.
The send loop shares its thread with the parsing of every open stream (about ${f(RATE * 257 / 1000, 0)}k tokens/s here), so
these figures hold for cores the client and the server have to themselves: on a busy machine the stalls, and
the late sends, grow with the load.

## 2. A derived workload re-simulated against its trace

For each trace: \`lm-bench workload from-trace TRACE --trace-speed K --out derived.yaml\`, then on the same simulated
deployment \`lm-bench sim run --trace TRACE --trace-speed K --seed 1\` (the trace's own requests) against
\`lm-bench sim run --workload derived.yaml --seed S\` for S = 1…5 (a derived workload is a draw: the mean of the
five, their range in brackets). Error = derived mean ÷ trace − 1. Goal: within 10% on mean TTFT and output throughput.

| trace | deployment | speed | trace TTFT (ms) | derived TTFT (ms) | TTFT error | trace out tok/s | derived out tok/s | throughput error | within 10% |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
${rows.join('\n')}

The first row is the benchmark's own traffic (TTFT ${benchCase === null ? '–' : pct(benchCase.ttftErr)}, throughput ${benchCase === null ? '–' : pct(benchCase.tputErr)}: ${benchCase !== null && Math.abs(benchCase.ttftErr) <= 0.1 && Math.abs(benchCase.tputErr) <= 0.1 ? 'within' : 'NOT within'} the 10% goal).
Where a row misses, read the ranges: a few hundred requests with prompts in a long tail (Mooncake's reach
120k tokens) make the derived workload's TTFT swing by several times from seed to seed, so no single fit can
sit within 10% of one realisation; and a trace whose arrivals are a few dense bursts with long gaps between
(the Azure code slice) is only approximated by one gamma process, whatever its shape (fitted to the gaps
by maximum likelihood; 1/CV², the shape the CV gives, makes it a few giant bursts and is further off).
Output throughput, set by the offered load, follows the trace's in every row.
`;
writeFileSync(join(root, 'bench', 'results', 'trace-replay.md'), md);
say('wrote bench/results/trace-replay.md');
