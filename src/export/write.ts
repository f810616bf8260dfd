import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LmBenchError } from '../errors.js';
import type { ExportDocuments } from './documents.js';
import type { ExportedDocument } from './types.js';

/**
 * The file-system edge of `export`: every file is written into a staging folder inside the output
 * folder first, then renamed into place (a rename within one folder's file system is atomic). A failure
 * while writing leaves the output folder as it was: no half-written file, no stray staging folder. A
 * name taken by a folder is refused before anything is renamed, so one export lands whole or not at all.
 */
export interface WrittenDocument {
  readonly document: ExportedDocument;
  readonly path: string;
  readonly sidecarPath: string | null;
}

export interface WrittenExport {
  readonly documents: readonly WrittenDocument[];
  readonly summaryPath: string | null;
}

function unwritable(dir: string, err: unknown): LmBenchError {
  const why = err instanceof Error ? err.message : String(err);
  return new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--out ${dir}: cannot write there (${why})`, { cause: err, details: { field: 'out', value: dir } });
}

export function writeExport(outDir: string, docs: ExportDocuments): WrittenExport {
  let stage: string;
  // A file at --out is a slip (the path of one report given for the folder): said so, not as mkdir's EEXIST.
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--out ${outDir} is a file; --out names a folder (created if missing) to write the files into`, { details: { field: 'out', value: outDir } });
  }
  try {
    mkdirSync(outDir, { recursive: true });
    stage = mkdtempSync(join(outDir, '.lm-bench-export-'));
  } catch (err) {
    throw unwritable(outDir, err);
  }
  try {
    const files = [...docs.documents.flatMap((d) => (d.sidecar === null ? [d.file] : [d.file, d.sidecar])), ...(docs.summary === null ? [] : [docs.summary])];
    for (const f of files) writeFileSync(join(stage, f.name), f.text);
    const blocked = files.map((f) => join(outDir, f.name)).filter((p) => existsSync(p) && statSync(p).isDirectory());
    if (blocked.length > 0) throw new Error(`${blocked.join(', ')}: a folder is in the way`);
    for (const f of files) renameSync(join(stage, f.name), join(outDir, f.name));
  } catch (err) {
    throw unwritable(outDir, err);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return {
    documents: docs.documents.map((d) => ({ document: d, path: join(outDir, d.file.name), sidecarPath: d.sidecar === null ? null : join(outDir, d.sidecar.name) })),
    summaryPath: docs.summary === null ? null : join(outDir, docs.summary.name),
  };
}
