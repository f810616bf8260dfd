import { join, relative, resolve } from 'node:path';
import { defaultCatalog, type Catalog } from '../../catalog/index.js';
import { LmBenchError } from '../../errors.js';
import { exportable, exportDocuments } from '../../export/documents.js';
import { gatherRuns, gatherStudy } from '../../export/gather.js';
import { parseRunFilter } from '../../export/run-filter.js';
import { ExportFormat, type ExportedFile, type ExportItem, type ExportReport, type Skipped } from '../../export/types.js';
import { writeExport } from '../../export/write.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import type { RunFilter, Store } from '../../store/index.js';
import { parseFlags, requireFlag } from '../args.js';
import { openExistingHistory } from '../history-db.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { OFFLINE_FLAG, resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { usage } from '../usage/export.js';



const OPTIONS = {
  study: { type: 'string' },
  runs: { type: 'string' },
  format: { type: 'string' },
  out: { type: 'string' },
  db: { type: 'string' },
  json: { type: 'boolean' },
  force: { type: 'boolean' },
  help: { type: 'boolean' },
  ...OFFLINE_FLAG,
} as const;

const FORMAT_NAMES: Record<ExportFormat, string> = { 'llm-d-br': 'llm-d Benchmark Report v0.2', vllm: '`vllm bench serve` result JSON' };

/** `--runs` → the store's RunFilter, GPU and model names resolved to the history's ids as GET /v1/runs does. */
interface FilterContext {
  readonly io: CliIo;
  readonly store: Store;
  readonly dbPath: string;
  readonly catalog: Catalog;
  readonly offline: boolean | undefined;
}

async function runFilter(text: string, { io, store, dbPath, catalog, offline }: FilterContext): Promise<RunFilter> {
  const spec = parseRunFilter(text);
  const model = spec.model === undefined ? undefined : identifyResolvedModel(store, await resolveModelFlag(spec.model, io, offline), catalog).spec.id;
  return {
    ...(model === undefined ? {} : { model }),
    ...(spec.gpu === undefined ? {} : { gpu: resolveGpuFlag(spec.gpu, io, dbPath).id }),
    ...(spec.gpus === undefined ? {} : { gpuCount: spec.gpus }),
    ...(spec.source_format === undefined ? {} : { sourceFormat: spec.source_format }),
    ...(spec.config === undefined ? {} : { config: spec.config as NonNullable<RunFilter['config']> }),
  };
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, OPTIONS);
  if (values.help === true) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  if ((values.study === undefined) === (values.runs === undefined)) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'give one of --study NAME or --runs FILTER', { details: { field: 'study' } });
  }
  const format = ExportFormat.safeParse(requireFlag(values.format, 'format'));
  if (!format.success) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--format must be one of ${ExportFormat.options.join(', ')}, got "${values.format}"`, { details: { field: 'format' } });
  const out = resolve(io.cwd, requireFlag(values.out, 'out'));
  // The filter's syntax is checked before the history is opened: a typo costs nothing.
  if (values.runs !== undefined) parseRunFilter(values.runs);
  const { store, dbPath } = openExistingHistory(io, values.db);
  const catalog = defaultCatalog();
  let items: ExportItem[];
  let skipped: Skipped[] = [];
  try {
    if (values.study !== undefined) {
      const gathered = gatherStudy(store, catalog, values.study);
      items = gathered.items;
      skipped = gathered.skipped;
      if (items.length === 0) throw new LmBenchError('LMB_ERR_NOT_FOUND', `study "${gathered.study.spec.name}" has no complete trial to export (${skipped.length} trial(s), none measured)`, { details: { field: 'study' } });
    } else {
      const text = values.runs as string;
      items = gatherRuns(store, catalog, await runFilter(text, { io, store, dbPath, catalog, offline: values.offline }));
      if (items.length === 0) throw new LmBenchError('LMB_ERR_NOT_FOUND', `no stored run matches --runs ${text}`, { details: { field: 'runs' } });
    }
  } finally {
    store.close();
  }

  const fit = exportable(items, format.data);
  skipped = [...skipped, ...fit.skipped];
  if (fit.items.length === 0) {
    const why = fit.skipped.map((s) => `${'run_id' in s ? `run ${s.run_id} (${s.source_format})` : `trial ${s.trial}`}: ${s.reason}`).join('; ');
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `nothing to write as ${FORMAT_NAMES[format.data]}: ${why}`, { details: { field: 'format' } });
  }
  const written = writeExport(out, exportDocuments(fit.items, format.data), { force: values.force === true });
  const files: ExportedFile[] = written.documents.map((w) => {
    const s = w.document.subject;
    return {
      path: w.path,
      format: format.data,
      ...(s.kind === 'run' ? { run_id: s.run_id } : { study: s.study, trial: s.trial }),
      ...(w.sidecarPath === null ? {} : { sidecar: w.sidecarPath }),
    };
  });
  const report: ExportReport = { format: format.data, out, files, summary: written.summaryPath, skipped, others: written.others.map((n) => join(out, n)) };
  if (values.json === true) writeJson(io, report);
  else io.stdout.write(formatReport(report, io.cwd));
  return 0;
}

export function formatReport(r: ExportReport, cwd: string): string {
  const rel = (p: string): string => {
    const x = relative(cwd, p);
    return x.startsWith('..') ? p : x;
  };
  const lines = [`${r.files.length} file(s) as ${FORMAT_NAMES[r.format]} in ${rel(r.out)}:`];
  for (const f of r.files) lines.push(`  ${rel(f.path)}${f.sidecar === undefined ? '' : ` (+ ${rel(f.sidecar)})`}`);
  if (r.summary !== null) lines.push(`  ${rel(r.summary)} (every record, for vllm bench sweep plot)`);
  // Said after the files: under --force, what a reader of the folder will find beside this export.
  if (r.others.length > 0) lines.push(`  left beside them (--force): ${r.others.map(rel).join(', ')}`);
  for (const s of r.skipped) lines.push('run_id' in s ? `  skipped run ${s.run_id} (${s.source_format}): ${s.reason}` : `  skipped trial ${s.trial} (${s.state}): ${s.reason}`);
  return `${lines.join('\n')}\n`;
}

export const command: Command = { name: 'export', summary: "write a study's trials or stored runs as llm-d Benchmark Report v0.2 or `vllm bench serve` JSON", usage, run };
