import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LmBenchError } from '../errors.js';
import type { ExportDocuments } from './documents.js';
import type { ExportedDocument } from './types.js';

/**
 * The file-system edge of `export`: every file is written into a staging folder inside the output
 * folder first, then renamed into place (a rename within one folder's file system is atomic). A failure
 * while writing leaves the output folder as it was: no half-written file, no stray staging folder. A
 * name taken by a folder is refused before anything is written, so one export lands whole or not at all.
 *
 * The output folder is the export: readers take a folder whole (`vllm bench sweep plot` globs
 * `**\/summary.json`, llm-d's analysis every `benchmark_report*`, `lm-bench ingest` every file in it), so
 * a folder holding anything this export does not write (an earlier export of other runs, whose files
 * summary.json no longer lists) is refused before anything is written, naming what is there, unless
 * `force`: then the export is written beside it. Nothing is ever deleted: lm-bench cannot tell a file an
 * earlier export wrote from one a person put there or edited since.
 */
export interface WrittenDocument {
  readonly document: ExportedDocument;
  readonly path: string;
  readonly sidecarPath: string | null;
}

export interface WrittenExport {
  readonly documents: readonly WrittenDocument[];
  readonly summaryPath: string | null;
  /** Entries of the folder this export did not write, left as they were (only with `force`), sorted. */
  readonly others: readonly string[];
}

export interface WriteExportOptions {
  /** Write into a folder holding entries this export does not write, leaving them as they are. */
  readonly force?: boolean;
}

/** How many of the other entries a refusal names before it counts the rest. */
const NAMED_OTHERS = 5;

function unwritable(dir: string, err: unknown): LmBenchError {
  const why = err instanceof Error ? err.message : String(err);
  return new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--out ${dir}: cannot write there (${why})`, { cause: err, details: { field: 'out', value: dir } });
}

function holdsOthers(dir: string, others: readonly string[]): LmBenchError {
  const named = others.slice(0, NAMED_OTHERS).join(', ');
  const rest = others.length > NAMED_OTHERS ? ` and ${others.length - NAMED_OTHERS} more` : '';
  return new LmBenchError(
    'LMB_ERR_INVALID_ARGUMENT',
    `--out ${dir} holds ${others.length} ${others.length === 1 ? 'entry' : 'entries'} this export would not write (${named}${rest}): a reader of the folder would take ${others.length === 1 ? 'it' : 'them'} for part of this export. Give a new or empty folder, remove ${others.length === 1 ? 'it' : 'them'}, or --force to write beside ${others.length === 1 ? 'it' : 'them'}`,
    { details: { field: 'out', value: dir, others: others.slice(0, 100) } },
  );
}

export function writeExport(outDir: string, docs: ExportDocuments, opts: WriteExportOptions = {}): WrittenExport {
  // A file at --out is a slip (the path of one report given for the folder): said so, not as mkdir's EEXIST.
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--out ${outDir} is a file; --out names a folder (created if missing) to write the files into`, { details: { field: 'out', value: outDir } });
  }
  const files = [...docs.documents.flatMap((d) => (d.sidecar === null ? [d.file] : [d.file, d.sidecar])), ...(docs.summary === null ? [] : [docs.summary])];
  const names = new Set(files.map((f) => f.name));
  let others: string[] = [];
  // What the folder holds is judged before anything is created in it.
  if (existsSync(outDir)) {
    let entries: string[];
    try {
      entries = readdirSync(outDir);
    } catch (err) {
      throw unwritable(outDir, err);
    }
    const blocked = files.map((f) => join(outDir, f.name)).filter((p) => existsSync(p) && statSync(p).isDirectory());
    if (blocked.length > 0) throw unwritable(outDir, new Error(`${blocked.join(', ')}: a folder is in the way`));
    others = entries.filter((n) => !names.has(n)).sort();
    if (others.length > 0 && opts.force !== true) throw holdsOthers(outDir, others);
  }
  let stage: string;
  try {
    mkdirSync(outDir, { recursive: true });
    stage = mkdtempSync(join(outDir, '.lm-bench-export-'));
  } catch (err) {
    throw unwritable(outDir, err);
  }
  try {
    for (const f of files) writeFileSync(join(stage, f.name), f.text);
    for (const f of files) renameSync(join(stage, f.name), join(outDir, f.name));
  } catch (err) {
    throw unwritable(outDir, err);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return {
    documents: docs.documents.map((d) => ({ document: d, path: join(outDir, d.file.name), sidecarPath: d.sidecar === null ? null : join(outDir, d.sidecar.name) })),
    summaryPath: docs.summary === null ? null : join(outDir, docs.summary.name),
    others,
  };
}
