import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { LmBenchError } from '../errors.js';
import type { Store } from '../store/index.js';
import { parseSidecar, type SidecarInfo } from './context.js';
import { DEFAULT_MAX_FILE_BYTES, ingestOne, rejectedReport, summarize, type FileReport, type IngestOptions, type IngestSummary } from './ingest.js';

/**
 * The file-system edge of ingest: expands directories, reads files and their sidecars, and hands
 * bytes to the pure core (ingest.ts). Everything else in src/ingest/ is free of I/O.
 */

/** Companion files a directory walk passes over (named explicitly, they are still ingested). */
const COMPANIONS = [
  /^summary\.json$/, // vllm bench sweep: the list of its run=N.json files
  /^warmup\.json$/, // vllm bench sweep warm-up run
  /\.failure\.json$/, // vllm bench sweep failure record
  /\.pytorch\.json$/, // vllm bench serve companion (SAVE_TO_PYTORCH_BENCHMARK_FORMAT)
  /^inputs\.json$/, // genai-perf inputs
  /^profile_export\.json$/, // genai-perf raw perf_analyzer trace
  /^checkpoint\.json$/, // genai-perf analyze resume file
  /^package(-lock)?\.json$/,
  /^tsconfig\.json$/,
];
const INGESTIBLE = /\.(json|jsonl)$/i;
export const DIR_SIDECAR = 'lm-bench.config.yaml';

interface Target {
  readonly path: string;
  /** The directory the walk started from (null for a file named explicitly). */
  readonly root: string | null;
}

/** Paths → files to ingest (directories walked recursively, in sorted order) and files passed over. */
export function expandPaths(paths: readonly string[], cwd: string): { targets: Target[]; ignored: string[]; missing: string[]; empty: string[] } {
  const targets: Target[] = [];
  const ignored: string[] = [];
  const missing: string[] = [];
  /** Directories named explicitly that hold nothing to ingest. */
  const empty: string[] = [];
  const walk = (dir: string, root: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('.')) continue;
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (name !== 'node_modules') walk(p, root);
      } else if (INGESTIBLE.test(name)) {
        if (COMPANIONS.some((re) => re.test(name))) ignored.push(p);
        else targets.push({ path: p, root });
      }
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
  return { targets, ignored, missing, empty };
}

/**
 * Ingests files and directories into the store, one transaction per file. Missing paths are rejected
 * with LMB_ERR_FILE_NOT_FOUND; the summary lists what was accepted, skipped and rejected.
 */
export function ingestFiles(store: Store, paths: readonly string[], options: IngestOptions & { readonly cwd?: string } = {}): IngestSummary {
  const { targets, ignored, missing, empty } = expandPaths(paths, options.cwd ?? process.cwd());
  const reports: FileReport[] = [
    ...missing.map((p) => rejectedReport(p, new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `no such file or directory: ${p}`))),
    ...empty.map((p) => {
      const passed = ignored.filter((f) => f.startsWith(`${p}/`)).map((f) => basename(f));
      return rejectedReport(p, new LmBenchError('LMB_ERR_INGEST_UNKNOWN_FORMAT', `${p}: no *.json or *.jsonl result files in this directory${passed.length > 0 ? ` (passed over as companions: ${passed.join(', ')})` : ''}`));
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
  return summarize(reports, ignored);
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
