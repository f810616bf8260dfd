import { isAbsolute, join, relative } from 'node:path';
import { defaultCatalog } from '../../catalog/index.js';
import { ERROR_CATALOG, LmBenchError } from '../../errors.js';
import { ingestFiles, parseSidecar, type IngestSummary, type StoredRun } from '../../ingest/index.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { adoptResolvedModel, identifyResolvedModel } from '../../store/adopt-model.js';
import { resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { parseKnobAssignments } from '../../domain/index.js';
import { numberFlag, parseFlags } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { readUserFile } from '../../util/yaml.js';
import { usage as USAGE } from '../usage/ingest.js';



const at = (cwd: string, p: string): string => (isAbsolute(p) ? p : join(cwd, p));

export const command: Command = {
  name: 'ingest',
  summary: 'store existing benchmark results (vLLM, SGLang, AIPerf, genai-perf, GuideLLM, inference-perf, llm-d, ML.ENERGY, lm-bench) in the history',
  usage: USAGE,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseFlags(
      argv,
      {
        'server-config': { type: 'string' },
        set: { type: 'string', multiple: true },
        gpu: { type: 'string' },
        gpus: { type: 'string' },
        model: { type: 'string' },
        db: { type: 'string' },
        json: { type: 'boolean' },
        offline: { type: 'boolean' },
        replace: { type: 'boolean' },
      },
      true,
    );
    if (positionals.length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'ingest needs at least one PATH', { details: { field: 'path' } });
    const catalog = defaultCatalog();
    let base: ReturnType<typeof parseSidecar> = {};
    const configFile = values['server-config'];
    if (configFile !== undefined) {
      const file = at(io.cwd, configFile);
      base = parseSidecar(readUserFile(file, '--server-config'), file);
    }
    const hasConfig = base.serverConfig !== undefined || (values.set?.length ?? 0) > 0;
    const serverConfig = hasConfig ? parseKnobAssignments(values.set, base.serverConfig ?? {}) : undefined;
    // Flags are checked up front (exit 2); names found inside files are checked per run.
    const gpuName = values.gpu ?? base.gpu;
    const gpu = gpuName === undefined ? undefined : resolveGpuFlag(gpuName, io).id;
    const modelName = values.model ?? base.model;
    const resolved = modelName === undefined ? undefined : await resolveModelFlag(modelName, io, values.offline);
    const gpus = numberFlag(values.gpus, 'gpus', { int: true, min: 1, max: 4096 }) ?? base.gpus;

    const dbPath = values.db === undefined ? defaultDbPath(io) : at(io.cwd, values.db);
    const store = openStore(dbPath);
    const progress = io.stderr.isTTY === true && values.json !== true;
    let summary: IngestSummary;
    try {
      // The runs name the model by the id its checkpoint has in this history; its spec is stored only
      // when a run is, or takes it with --replace (a rejected file leaves the database as it was).
      const model = resolved === undefined ? undefined : identifyResolvedModel(store, resolved, catalog).spec.id;
      summary = ingestFiles(store, positionals, {
        cwd: io.cwd,
        catalog,
        serverConfig,
        gpu,
        gpus,
        model,
        replace: values.replace === true,
        onFile: progress ? (r, i) => io.stderr.write(`\r\x1b[K[${i + 1}] ${r.status} ${relative(io.cwd, r.path)}`) : undefined,
      });
      if (resolved !== undefined && summary.accepted + summary.replaced > 0) adoptResolvedModel(store, resolved, catalog);
    } finally {
      store.close();
    }
    if (progress) io.stderr.write('\r\x1b[K');
    if (values.json === true) writeJson(io, { db: dbPath, ...summary });
    else io.stdout.write(formatSummary(summary, io.cwd, dbPath));
    return summary.rejected.length === 0 ? 0 : ERROR_CATALOG.LMB_ERR_INGEST_REJECTED.exitCode;
  },
};

export function formatSummary(s: IngestSummary, cwd: string, dbPath: string): string {
  const rel = (p: string): string => {
    const r = relative(cwd, p);
    return r.startsWith('..') ? p : r;
  };
  const lines = [
    `${s.files.length} file(s) into ${rel(dbPath)}: ${s.accepted} run(s) accepted, ${s.skipped} skipped as already stored${s.replaced > 0 ? ` (${s.replaced} given this ingest's context)` : ''}, ${s.rejected.length} file(s) rejected`,
  ];
  for (const f of s.files) {
    if (f.status === 'rejected') lines.push(`  rejected  ${rel(f.path)}: ${f.code ?? ''} ${f.reason ?? ''}`);
    else {
      lines.push(`  ${f.status.padEnd(8)}  ${rel(f.path)} (${f.format ?? '?'}): ${f.accepted} new, ${f.skipped} already stored${f.replaced > 0 ? ` (${f.replaced} given this ingest's context)` : ''}`);
      lines.push(...storedTable(f.stored, new Set(f.run_ids), new Set(f.replaced_ids)));
    }
    for (const w of f.warnings) lines.push(`            note: ${w}`);
  }
  const shown = s.passed_over.slice(0, 20);
  if (shown.length > 0) lines.push(`  ${s.passed_over.length} file(s) passed over:`);
  for (const p of shown) lines.push(`    ${rel(p.path)}: ${p.reason}`);
  if (s.passed_over.length > shown.length) lines.push(`    … and ${s.passed_over.length - shown.length} more (--json lists them all)`);
  return `${lines.join('\n')}\n`;
}

const STORED_COLUMNS = ['run', 'completed', 'failed', 'duration_s', 'mean_ttft_ms', 'output_tok_s', ''] as const;

/** The runs of one file as a table; "-" where the file has no such figure. */
function storedTable(stored: readonly StoredRun[], fresh: ReadonlySet<number>, replaced: ReadonlySet<number>): string[] {
  if (stored.length === 0) return [];
  const fmt = (x: number | null, digits: number): string => (x === null ? '-' : Number.isInteger(x) ? String(x) : x.toFixed(digits));
  const rows = stored.map((r) => [
    r.run_id === null ? '?' : `#${r.run_id}`,
    fmt(r.completed, 0),
    fmt(r.failed, 0),
    fmt(r.duration_s, 2),
    fmt(r.mean_ttft_ms, 1),
    fmt(r.output_throughput, 1),
    r.run_id !== null && fresh.has(r.run_id) ? 'new' : r.run_id !== null && replaced.has(r.run_id) ? 'context replaced' : 'already stored',
  ]);
  const widths = STORED_COLUMNS.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `            ${cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ').trimEnd()}`;
  return [line(STORED_COLUMNS), ...rows.map(line)];
}
