import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { LmBenchError } from '../errors.js';
import type { Store } from '../store/index.js';
import { parseSidecar, type SidecarInfo } from './context.js';
import type { PassedOver } from './parsed.js';
import { DEFAULT_MAX_FILE_BYTES, ingestOne, rejectedReport, summarize, type FileReport, type IngestOptions, type IngestSummary } from './ingest.js';

/**
 * The file-system edge of ingest: expands directories, reads files and their sidecars, and hands
 * bytes to the pure core (ingest.ts). Everything else in src/ingest/ is free of I/O.
 */

/**
 * Files a directory walk passes over, each with the reason it gives (named explicitly, a file is still
 * read). Companions hold data about a run that a result file beside them already has, or no run at all.
 */
const COMPANIONS: readonly (readonly [RegExp, string])[] = [
  [/^summary\.(json|csv)$/, 'vllm bench sweep summary (the run=N.json files hold the same runs)'],
  [/^warmup\.json$/, 'vllm bench sweep warm-up run (not a measurement)'],
  [/\.failure\.json$/, 'vllm bench sweep failure record'],
  [/\.pytorch\.json$/, 'vllm bench serve companion (PyTorch benchmark format)'],
  [/^inputs\.json$/, 'genai-perf/AIPerf request inputs, not results'],
  [/^profile_export\.jsonl?$/, 'per-request records of genai-perf/AIPerf (the profile_export_*.json summary is read)'],
  [/^checkpoint\.json$/, 'genai-perf analyze resume file'],
  [/^(server_metrics_export|gpu_telemetry_export)/, 'AIPerf server or GPU telemetry export, not request results'],
  [/_aiperf_(aggregate|collated|timeslices|steady_state|energy_efficiency)\./, 'AIPerf multi-run or windowed aggregate (the per-run export is read)'],
  [/_prometheus_metrics\.json$/, 'inference-perf server Prometheus metrics, not request results'],
  [/^per_(request|session)_lifecycle_metrics\.json$/, 'inference-perf per-request records (the summary and stage reports are read)'],
  [/session_lifecycle_metrics\.json$/, 'inference-perf session summary (the request summary is read)'],
  [/\.config\.ya?ml$/, 'a sidecar: the context of its result file, not a result'],
  [/^lm-bench\.config\.ya?ml$/, 'the folder sidecar: context, not a result'],
  [/^config\.ya?ml$/, 'a tool run configuration (inference-perf, GuideLLM, …), not results'],
  [/^package(-lock)?\.json$/, 'not a benchmark file'],
  [/^tsconfig\.json$/, 'not a benchmark file'],
];
const INGESTIBLE = /\.(json|jsonl|ya?ml|csv)$/i;
export const DIR_SIDECAR = 'lm-bench.config.yaml';

interface Target {
  readonly path: string;
  /** The directory the walk started from (null for a file named explicitly). */
  readonly root: string | null;
}

/**
 * Paths → files to ingest (directories walked recursively, in sorted order) and files passed over
 * with the reason: companions, sidecars, tool configs, a CSV or YAML export beside the JSON export of
 * the same run (stored once, from the JSON, which carries the model and load settings the CSV lacks),
 * and files of other kinds.
 */
export function expandPaths(
  paths: readonly string[],
  cwd: string,
): { targets: Target[]; ignored: string[]; passedOver: PassedOver[]; missing: string[]; empty: string[]; unreadable: PassedOver[] } {
  const targets: Target[] = [];
  const passedOver: PassedOver[] = [];
  const ignored: string[] = [];
  const missing: string[] = [];
  /** Directories named explicitly that hold nothing to ingest. */
  const empty: string[] = [];
  /** Entries of a walked directory that cannot be read (a dangling link, no permission): rejected, the walk goes on. */
  const unreadable: PassedOver[] = [];
  /** Real paths of the directories walked: a link back up the tree is walked once, not until ELOOP. */
  const walked = new Set<string>();
  const walk = (dir: string, root: string): void => {
    let names: string[];
    try {
      const real = realpathSync(dir);
      if (walked.has(real)) {
        passedOver.push({ path: dir, reason: `a link to ${real}, a folder already walked` });
        return;
      }
      walked.add(real);
      names = readdirSync(dir).sort();
    } catch (err) {
      unreadable.push({ path: dir, reason: unreadableReason(err) });
      return;
    }
    const jsonStems = new Set(names.filter((n) => /\.json$/i.test(n)).map((n) => n.replace(/\.json$/i, '')));
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = join(dir, name);
      let st: ReturnType<typeof statSync>;
      try {
        st = statSync(p);
      } catch (err) {
        // One bad entry (a dangling link) made the whole ingest fail with LMB_ERR_INTERNAL.
        unreadable.push({ path: p, reason: unreadableReason(err) });
        continue;
      }
      if (st.isDirectory()) {
        if (name !== 'node_modules') walk(p, root);
        continue;
      }
      if (!INGESTIBLE.test(name)) {
        passedOver.push({ path: p, reason: `not a result format lm-bench reads (${extname(name) || 'no extension'})` });
        continue;
      }
      const companion = COMPANIONS.find(([re]) => re.test(name));
      const stem = name.replace(/\.(csv|ya?ml)$/i, '');
      const reason =
        companion?.[1] ??
        (stem !== name && jsonStems.has(stem) ? `the same results as ${stem}.json beside it, which is read` : undefined) ??
        // inference-perf's summary pools every stage (each at its own rate): the stage reports are the runs.
        (name === 'summary_lifecycle_metrics.json' && names.some((n) => /^stage_\d+_lifecycle_metrics\.json$/.test(n)) ? 'inference-perf summary of the stage reports beside it, which are read (one run per rate)' : undefined);
      if (reason !== undefined) {
        passedOver.push({ path: p, reason });
        // `ignored` keeps its meaning from before YAML and CSV were read: JSON companions only.
        if (/\.jsonl?$/i.test(name)) ignored.push(p);
      } else targets.push({ path: p, root });
    }
  };
  for (const raw of paths) {
    const p = resolve(cwd, raw);
    if (!existsSync(p)) {
      missing.push(p);
      continue;
    }
    if (statSync(p).isDirectory()) {
      const before = targets.length;
      walk(p, p);
      if (targets.length === before) empty.push(p);
    } else targets.push({ path: p, root: null });
  }
  return { targets, ignored, passedOver, missing, empty, unreadable };
}

function unreadableReason(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return 'cannot be read: it does not exist (a dangling link?)';
  if (code === 'ELOOP') return 'cannot be read: a loop of symbolic links';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read: permission denied';
  return `cannot be read: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * Ingests files and directories into the store, one transaction per file. Missing paths are rejected
 * with LMB_ERR_FILE_NOT_FOUND; the summary lists what was accepted, skipped and rejected.
 */
export function ingestFiles(store: Store, paths: readonly string[], options: IngestOptions & { readonly cwd?: string } = {}): IngestSummary {
  const { targets, ignored, passedOver, missing, empty, unreadable } = expandPaths(paths, options.cwd ?? process.cwd());
  const reports: FileReport[] = [
    ...missing.map((p) => rejectedReport(p, new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `no such file or directory: ${p}`))),
    ...unreadable.map((u) => rejectedReport(u.path, new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${u.path}: ${u.reason}`))),
    ...empty.map((p) => {
      const passed = passedOver.filter((f) => f.path.startsWith(`${p}/`)).map((f) => `${basename(f.path)}: ${f.reason}`);
      return rejectedReport(
        p,
        new LmBenchError('LMB_ERR_INGEST_UNKNOWN_FORMAT', `${p}: no result files (*.json, *.jsonl, *.yaml, *.csv) in this directory${passed.length > 0 ? `; passed over: ${passed.slice(0, 5).join('; ')}${passed.length > 5 ? `; and ${passed.length - 5} more` : ''}` : ''}`),
      );
    }),
  ];
  const max = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  for (const [i, t] of targets.entries()) {
    let report: FileReport;
    try {
      // The size is checked before reading, so an oversized file is never loaded into memory.
      const size = statSync(t.path).size;
      report = size > max ? oversized(t.path, size, max) : ingestOne(store, { path: t.path, bytes: readFileSync(t.path), sidecar: findSidecar(t) }, options);
    } catch (err) {
      report = rejectedReport(t.path, err);
    }
    reports.push(report);
    options.onFile?.(report, i);
  }
  return summarize(reports, ignored, passedOver);
}

/** `<file>.config.yaml`, else the nearest `lm-bench.config.yaml` between the file and the walk's root. */
export function findSidecar(t: Target): SidecarInfo | null {
  const own = `${t.path}.config.yaml`;
  if (existsSync(own)) return parseSidecar(readFileSync(own, 'utf8'), own);
  let dir = dirname(t.path);
  const stop = t.root ?? dir;
  for (;;) {
    const candidate = join(dir, DIR_SIDECAR);
    if (existsSync(candidate)) return parseSidecar(readFileSync(candidate, 'utf8'), candidate);
    if (dir === stop || dirname(dir) === dir || !dir.startsWith(stop)) return null;
    dir = dirname(dir);
  }
}

function oversized(path: string, size: number, max: number): FileReport {
  return rejectedReport(
    path,
    new LmBenchError('LMB_ERR_INGEST_REJECTED', `${basename(path)} is ${(size / 2 ** 20).toFixed(1)} MiB, over the ${(max / 2 ** 20).toFixed(0)} MiB limit`),
  );
}
