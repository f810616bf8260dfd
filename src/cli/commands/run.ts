import { dirname, resolve } from 'node:path';
import { parse as parseYamlText } from 'yaml';
import type { RequestRecord } from '../../domain/index.js';
import { parseKnobAssignments, parseSloString, Workload } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { BenchConfig, expandSweep, overlay, rawConfigOfWorkload } from '../../loadgen/config.js';
import { DEFAULT_TRANSPORT, apiKeyFrom, outputLengthsWarning, parseEndpoint, runBenchmark } from '../../loadgen/index.js';
import { describeTarget, endpointOfFlags } from '../../loadgen/endpoint.js';
import { planRun } from '../../loadgen/plan.js';
import { routeFor } from '../../loadgen/connect.js';
import { sweepReportHtml } from '../../report/sweep.js';
import { loadYamlFile, parseYaml, readUserFile } from '../../util/yaml.js';
import { numberFlag, parseFlags, promptSaltFlag, requireFlag } from '../args.js';
import { jsonReplacer, writeJson, type CliIo, type Command } from '../io.js';
import { powerSpecOfFlags } from '../power-flags.js';
import { ENDPOINT_FLAG, runAdaptive } from './run-adaptive.js';
import { parseRateStagesFlag } from '../../workload/stages-flag.js';
import { requestLatencyLines } from '../../domain/request-latency.js';
import { keepStopped, noUsageWarning, summaryText, traceReplayLine, traceReplayReport, runOutputPaths, writeOutput, type RunOutput } from './run-output.js';
import { usage as USAGE } from '../usage/run.js';



const FLAGS = {
  endpoint: { type: 'string' },
  'base-url': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'api-key': { type: 'string' },
  'ca-cert': { type: 'string' },
  insecure: { type: 'boolean' },
  'connect-timeout-s': { type: 'string' },
  'dry-run': { type: 'boolean' },
  config: { type: 'string' },
  workload: { type: 'string' },
  trace: { type: 'string' },
  'trace-speed': { type: 'string' },
  'trace-limit': { type: 'string' },
  output: { type: 'string' },
  html: { type: 'string' },
  records: { type: 'string' },
  'requests-out': { type: 'string' },
  'prompt-pool': { type: 'string' },
  json: { type: 'boolean' },
  model: { type: 'string' },
  api: { type: 'string' },
  'input-len': { type: 'string' },
  'output-len': { type: 'string' },
  'num-prompts': { type: 'string' },
  concurrency: { type: 'string' },
  'request-rate': { type: 'string' },
  'rate-stages': { type: 'string' },
  burstiness: { type: 'string' },
  'max-concurrency': { type: 'string' },
  'duration-s': { type: 'string' },
  warmup: { type: 'string' },
  seed: { type: 'string' },
  'prompt-salt': { type: 'string' },
  slo: { type: 'string' },
  'timeout-s': { type: 'string' },
  workers: { type: 'string' },
  label: { type: 'string' },
  mode: { type: 'string' },
  control: { type: 'string' },
  'window-s': { type: 'string' },
  'start-rps': { type: 'string' },
  set: { type: 'string', multiple: true },
  'power-metrics': { type: 'string', multiple: true },
  'power-smi': { type: 'string' },
  'power-gpus': { type: 'string' },
} as const;

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>['values'];

const rateFlag = (raw: string | undefined, flag: string): number | 'inf' | undefined =>
  raw === undefined ? undefined : raw.trim().toLowerCase() === 'inf' ? 'inf' : numberFlag(raw, flag, { min: Number.MIN_VALUE });

/** Flags laid over the raw config; returns the dotted paths they set (those leave the sweep). */
function applyFlags(raw: Record<string, unknown>, v: Values, cwd: string): string[] {
  const set: string[] = [];
  const put = (path: string, value: unknown): void => {
    if (value === undefined) return;
    overlay(raw, path, value);
    set.push(path);
  };
  // `--endpoint URL`, or vllm bench serve's --base-url / --host / --port with --endpoint as the path.
  const port = numberFlag(v.port, 'port', { int: true, min: 1, max: 65_535 });
  put('endpoint', endpointOfFlags({ endpoint: v.endpoint, baseUrl: v['base-url'], host: v.host, port }));
  put('ca_cert', v['ca-cert'] === undefined ? undefined : resolve(cwd, v['ca-cert']));
  put('insecure', v.insecure);
  put('connect_timeout_s', numberFlag(v['connect-timeout-s'], 'connect-timeout-s', { min: Number.MIN_VALUE, max: 600 }));
  put('model', v.model);
  if (v.api !== undefined && v.api !== 'completions' && v.api !== 'chat') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--api must be completions or chat, got "${v.api}"`, { details: { field: 'api' } });
  }
  put('api', v.api);
  const inLen = numberFlag(v['input-len'], 'input-len', { int: true, min: 1 });
  const outLen = numberFlag(v['output-len'], 'output-len', { int: true, min: 1 });
  if (v.trace !== undefined) {
    if (inLen !== undefined || outLen !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--trace brings its own lengths; --input-len and --output-len cannot go with it', { details: { field: 'trace' } });
    const speed = numberFlag(v['trace-speed'], 'trace-speed', { min: 1e-6, max: 1e6 }) ?? 1;
    const limit = numberFlag(v['trace-limit'], 'trace-limit', { int: true, min: 1, max: 1_000_000 });
    raw['dataset'] = { kind: 'trace', path: resolve(cwd, v.trace), speed, ...(limit === undefined ? {} : { limit }) };
    set.push('dataset', 'dataset.path', 'dataset.speed', 'dataset.limit');
  } else if (v['trace-speed'] !== undefined || v['trace-limit'] !== undefined) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${v['trace-speed'] === undefined ? 'trace-limit' : 'trace-speed'} goes with --trace FILE`, { details: { field: 'trace' } });
  }
  if (inLen !== undefined || outLen !== undefined) {
    const ds = raw['dataset'] as Record<string, unknown> | undefined;
    if (ds === undefined || ds['kind'] !== 'synthetic') {
      raw['dataset'] = { kind: 'synthetic', input_len: inLen ?? 512, output_len: outLen ?? 128 };
      set.push('dataset.input_len', 'dataset.output_len', 'dataset');
    } else {
      put('dataset.input_len', inLen);
      put('dataset.output_len', outLen);
    }
  }
  put('num_prompts', numberFlag(v['num-prompts'], 'num-prompts', { int: true, min: 1, max: 1_000_000 }));
  const pool = numberFlag(v['prompt-pool'], 'prompt-pool', { int: true, min: 1, max: 1_000_000 });
  if (pool !== undefined) {
    const ds = raw['dataset'] as Record<string, unknown> | undefined;
    if (ds?.['kind'] !== 'synthetic') throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--prompt-pool re-sends synthetic prompts; the dataset is not synthetic', { details: { field: 'prompt-pool' } });
    put('dataset.prompt_pool', { size: pool });
  }
  const conc = numberFlag(v.concurrency, 'concurrency', { int: true, min: 1 });
  const rate = rateFlag(v['request-rate'], 'request-rate');
  const cap = numberFlag(v['max-concurrency'], 'max-concurrency', { int: true, min: 1 });
  const stages = v['rate-stages'] === undefined ? undefined : parseRateStagesFlag(v['rate-stages']);
  if (stages !== undefined && rate !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--rate-stages and --request-rate both set the rate; give one', { details: { field: 'rate-stages' } });
  if (conc !== undefined || rate !== undefined || cap !== undefined || stages !== undefined) {
    const prev = (raw['traffic'] as Record<string, unknown> | undefined) ?? {};
    const traffic: Record<string, unknown> = { ...prev };
    if (rate !== undefined || stages !== undefined) {
      delete traffic['concurrency'];
      delete traffic['ramp_up'];
      delete traffic['request_rate'];
      delete traffic['stages'];
      if (rate !== undefined) traffic['request_rate'] = rate;
      if (stages !== undefined) traffic['stages'] = stages;
      if (conc !== undefined) traffic['max_concurrency'] = conc;
      // As `sim run`: new stages bound the run (their request count unless --num-prompts lowers it), so
      // a workload file's num_prompts, written for its own arrival, neither cuts them short nor differs.
      if (stages !== undefined && v['num-prompts'] === undefined) delete raw['num_prompts'];
    } else if (conc !== undefined) {
      delete traffic['request_rate'];
      delete traffic['stages'];
      delete traffic['ramp_up'];
      delete traffic['max_concurrency'];
      traffic['concurrency'] = conc;
    }
    if (cap !== undefined) traffic['max_concurrency'] = cap;
    raw['traffic'] = traffic;
    set.push('traffic', 'traffic.concurrency', 'traffic.request_rate', 'traffic.max_concurrency', 'traffic.stages');
  }
  put('traffic.burstiness', rateFlag(v.burstiness, 'burstiness'));
  put('duration_s', numberFlag(v['duration-s'], 'duration-s', { min: Number.MIN_VALUE }));
  const warm = numberFlag(v.warmup, 'warmup', { int: true, min: 0 });
  if (warm !== undefined) put('warmup', { requests: warm });
  put('seed', numberFlag(v.seed, 'seed', { int: true, min: 0 }));
  put('timeout_s', numberFlag(v['timeout-s'], 'timeout-s', { min: Number.MIN_VALUE }));
  put('workers', numberFlag(v.workers, 'workers', { int: true, min: 1 }));
  if (v.slo !== undefined) put('slo', parseSloString(v.slo));
  return set;
}

function loadRaw(file: string | undefined, workload: string | undefined, cwd: string, trace: boolean): { raw: Record<string, unknown>; baseDir: string } {
  if (trace && workload !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--workload and --trace both describe the load; give one', { details: { field: 'trace' } });
  // A trace brings its requests and their times: the flags lay it over a config's endpoint and limits.
  if (trace && file === undefined) return { raw: {}, baseDir: cwd };
  if (workload !== undefined) {
    if (file !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--workload and --config both describe the load; give one', { details: { field: 'workload' } });
    const path = resolve(cwd, workload);
    return { raw: rawConfigOfWorkload(loadYamlFile(path, Workload, 'LMB_ERR_WORKLOAD_INVALID')), baseDir: dirname(path) };
  }
  if (file === undefined) {
    // vllm bench serve's defaults: every prompt at once (rate inf), random prompts.
    return { raw: { dataset: { kind: 'synthetic', input_len: 512, output_len: 128 }, traffic: { request_rate: 'inf' } }, baseDir: cwd };
  }
  const path = resolve(cwd, file);
  const text = readUserFile(path, 'run config');
  parseYaml(text, BenchConfig, { file }); // the file on its own: errors carry file:line:field
  return { raw: parseYamlText(text) as Record<string, unknown>, baseDir: dirname(path) };
}

function validateMerged(raw: Record<string, unknown>, viaFlags: boolean): BenchConfig {
  const res = BenchConfig.safeParse(raw);
  if (res.success) return res.data;
  const lines = res.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`);
  throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${viaFlags ? 'flags' : 'config'}: ${lines.join('; ')}`, { details: { issues: lines } });
}

export const command: Command = {
  name: 'run',
  summary: 'load runner against an OpenAI-compatible server (like `vllm bench serve`)',
  usage: USAGE,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const { values } = parseFlags(argv, FLAGS);
    const { raw, baseDir } = loadRaw(values.config, values.workload, io.cwd, values.trace !== undefined);
    const flagPaths = applyFlags(raw, values, io.cwd);
    const sweep = raw['sweep'] as Record<string, unknown> | undefined;
    if (sweep !== undefined) {
      for (const k of Object.keys(sweep)) if (flagPaths.some((p) => k === p || k.startsWith(`${p}.`))) delete sweep[k];
      if (Object.keys(sweep).length === 0) delete raw['sweep'];
    }
    const base = validateMerged(raw, (values.config === undefined && values.workload === undefined) || flagPaths.length > 0);
    const mode = values.mode ?? 'fixed';
    if (mode !== 'fixed' && mode !== 'slo-hold' && mode !== 'max-rate') {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--mode must be fixed, slo-hold or max-rate, got "${mode}"`, { details: { field: 'mode' } });
    }
    const knownConfig = values.set === undefined ? undefined : parseKnobAssignments(values.set);
    const power = powerSpecOfFlags(values, io.env);
    // Checked before any mode runs (a dry run included); drawn here so each invocation sends new words.
    const salt = promptSaltFlag(values['prompt-salt']);
    // Every output path checked before the load, and kept: a run against a real server is not lost to
    // a write that fails after it (a folder named, a path under a file), and the write goes where the
    // check looked.
    const paths = runOutputPaths(values, io.cwd);
    if (mode !== 'fixed' && base.dataset.kind === 'trace') {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--mode ${mode} searches the request rate; a trace brings its own arrival times (replay it with --mode fixed, or search the rate of its fit: lm-bench workload from-trace, then --workload)`, { details: { field: 'mode' } });
    }
    if (mode !== 'fixed' && base.traffic.stages !== undefined) {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--mode ${mode} searches the request rate; rate stages set it themselves (run them with --mode fixed)`, { details: { field: 'mode' } });
    }
    if (mode !== 'fixed') return runAdaptive(mode, { raw, base, baseDir, knownConfig, power, promptSalt: salt, paths }, values, io);
    const points = expandSweep(raw, base);
    const plans = points.map((p, i) => planRun(p.config, baseDir, values.label ?? (points.length > 1 ? `${p.config.name}-${i + 1}` : p.config.name)));
    const apiKey = apiKeyFrom(values['api-key'], io.env['OPENAI_API_KEY']);
    const endpointOf = (plan: (typeof plans)[number]): string =>
      requireFlag(plan.endpoint, ENDPOINT_FLAG);
    if (values['dry-run'] === true) {
      const lines = plans.map((plan) => {
        const ep = routeFor(parseEndpoint(endpointOf(plan)), plan.workload.api).route;
        return describeTarget(ep, { ...DEFAULT_TRANSPORT, ...plan.transport, apiKey }, { prompts: plan.workload.num_prompts + (plan.warmupRequests ?? 0), durationS: plan.durationS, timeoutS: (plan.timeoutMs ?? 600_000) / 1000 });
      });
      if (values.json === true) writeJson(io, { dry_run: true, points: lines.map((target, i) => ({ target, values: points[i]?.values ?? {} })) });
      else io.stdout.write(`${lines.map((l) => `would ${l}`).join('\n')}\n`);
      return 0;
    }
    const tty = io.stderr.isTTY === true;
    const results: RunOutput[] = [];
    const allRecords: RequestRecord[] = [];
    const ac = new AbortController();
    const onSignal = (): void => ac.abort();
    process.once('SIGINT', onSignal);
    /** The files of the points measured so far (a sweep's in JSON Lines, even when one point is in). */
    const writeFiles = async (): Promise<void> => {
      const out = (v: unknown): string => JSON.stringify(v, jsonReplacer);
      if (paths.output !== undefined) {
        const text = points.length === 1 ? `${JSON.stringify(results[0], jsonReplacer, 2)}\n` : `${results.map(out).join('\n')}\n`;
        writeOutput('output', paths.output, text);
      }
      if (paths.records !== undefined) writeOutput('records', paths.records, allRecords.map((r) => `${out(r)}\n`).join(''));
      if (paths['requests-out'] !== undefined) writeOutput('requests-out', paths['requests-out'], requestLatencyLines(allRecords));
      if (paths.html !== undefined) {
        const html = await sweepReportHtml(results, { title: `lm-bench run: ${base.name}`, generatedAt: new Date().toISOString() });
        writeOutput('html', paths.html, html);
      }
    };
    /** A point stopped part-way (Ctrl-C): what it sent, kept with the points before it. */
    let stoppedPoint: { readonly sent: number; readonly total: number } | null = null;
    /** One point's output: its result with what `run` adds, and its records under ids naming the point. */
    const keep = (i: number, plan: (typeof plans)[number], run: Awaited<ReturnType<typeof runBenchmark>>, stopped?: string): RunOutput => {
      const measured = knownConfig === undefined ? run.result : { ...run.result, server_config: knownConfig };
      const replay = plan.trace === undefined ? undefined : traceReplayReport(plan.trace, run.lateness);
      const result: RunOutput = {
        ...measured,
        ...(replay === undefined ? {} : { trace_replay: replay }),
        ...(run.outputLengths === null ? {} : { output_lengths: run.outputLengths }),
        ...(stopped === undefined ? {} : { stopped }),
      };
      results.push(result);
      for (const r of run.records) allRecords.push(points.length > 1 ? { ...r, request_id: `p${i + 1}-${r.request_id}` } : r);
      return result;
    };
    try {
      for (const [i, plan] of plans.entries()) {
        const tag = points.length > 1 ? `[${i + 1}/${points.length}] ${JSON.stringify(points[i]?.values)} ` : '';
        const run = await runBenchmark({
          ...plan,
          // Each point of a sweep in words of its own: the points share the seed and the server's cache.
          promptSalt: points.length > 1 ? `${salt}.${i + 1}` : salt,
          knownConfig,
          power,
          powerEnv: io.env,
          endpoint: endpointOf(plan),
          transport: { ...plan.transport, apiKey },
          env: io.env,
          onTarget: (line) => io.stderr.write(`lm-bench: ${tag}${line}\n`),
          signal: ac.signal,
          onProgress: tty ? (p) => io.stderr.write(`\r${tag}${p.done + p.failed}/${p.total} done, ${p.failed} failed   `) : undefined,
          // Stopped part-way (Ctrl-C): the requests sent are load the server did, kept as slo-hold keeps its
          // own (those the stop cut short on record as \`aborted\`, out of the result).
          onStopped: (partial, err) => {
            const sent = partial.records.filter((r) => r.phase === 'measure').length;
            stoppedPoint = { sent, total: plan.workload.num_prompts };
            keep(i, plan, partial, `the run stopped after ${sent} of ${plan.workload.num_prompts} requests: ${err.message}`);
          },
        });
        if (tty) io.stderr.write('\n');
        const { records } = run;
        const result = keep(i, plan, run);
        const replay = result.trace_replay;
        if (values.json !== true) io.stdout.write(`${summaryText(result, tag)}${replay === undefined ? '' : `\n${traceReplayLine(replay)}`}\n`);
        if (run.outputLengths !== null) io.stderr.write(`lm-bench: warning: ${tag}${outputLengthsWarning(run.outputLengths)}\n`);
        const uncounted = noUsageWarning(records);
        if (uncounted !== null) io.stderr.write(`lm-bench: warning: ${tag}${uncounted}\n`);
        if (result.diagnosis?.bottleneck === 'client') {
          io.stderr.write(`lm-bench: warning: the load generator itself fell behind (${result.diagnosis.summary}); its latencies include its own delay (try --workers on a machine with spare cores, or a less loaded one)\n`);
        }
      }
    } catch (err) {
      // A sweep that stops at a later point (the server went away, Ctrl-C) keeps the points it measured.
      const partial = stoppedPoint as { readonly sent: number; readonly total: number } | null;
      if (partial === null) await keepStopped(`the sweep stopped at point ${results.length + 1} of ${points.length}`, { n: results.length, noun: 'point' }, paths, writeFiles, io);
      else if (points.length === 1) await keepStopped(`the run stopped after ${partial.sent} of ${partial.total} requests`, { n: allRecords.filter((r) => r.phase === 'measure').length, noun: 'request' }, paths, writeFiles, io);
      else await keepStopped(`the sweep stopped at point ${results.length} of ${points.length}, after ${partial.sent} of its ${partial.total} requests`, { n: results.length, noun: 'point' }, paths, writeFiles, io);
      throw err;
    } finally {
      process.removeListener('SIGINT', onSignal);
    }
    await writeFiles();
    if (values.json === true) writeJson(io, results.length === 1 ? results[0] : { results });
    const failedAll = results.every((r) => r.completed === 0);
    return failedAll ? 1 : 0;
  },
};
