/**
 * The bad-input corpus's shared machinery: a seeded SQLite file, row counts of every table, the checks
 * every case must pass (non-zero exit or 4xx, a catalog code, a message naming the offending field,
 * file or line, no stack trace, no rows changed) and a verdict per case for the summary.
 *
 * A case is judged, not just asserted: `judge` returns the problems found, each with the category it
 * falls in (partial write > crash > unclear), so a failing case says exactly what the product did.
 * With LMB_BAD_INPUTS_REPORT=DIR set, every test file writes its verdicts to DIR/<file>.json
 * (used to write the corpus summary; the tests themselves do not need it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec, Workload } from '../../src/domain/index.js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors.js';
import { DEFAULT_OBJECTIVES } from '../../src/optimize/objectives.js';
import { ingestFiles } from '../../src/ingest/index.js';
import { openStore } from '../../src/store/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';

export const FILES = join(PROJECT_ROOT, 'test', 'bad-inputs', 'files');
export const INGEST_FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');
export const CHAT_WORKLOAD = join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml');
export const SPACE_FILE = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
export const SEEDED_STUDY = 'seeded-study';

/* ------------------------------------------------------------------ sandbox */

export interface Sandbox {
  readonly dir: string;
  /** A SQLite file holding a few rows in every table (see `seedDb`). */
  readonly db: string;
  cleanup(): void;
}

export function makeSandbox(prefix: string): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), `lmb-bad-${prefix}-`));
  const db = join(dir, 'seeded.db');
  seedDb(db);
  return { dir, db, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function seedSpec(name = SEEDED_STUDY): StudySpec {
  const workload = loadYamlFile(CHAT_WORKLOAD, Workload);
  return StudySpec.parse({
    name,
    space: SPACE_FILE,
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload,
    slo: workload.slo ?? {},
    objectives: [...DEFAULT_OBJECTIVES],
    target: JSON.stringify({ kind: 'sim' }),
    seed: 0,
    budget_trials: 4,
    budget_hours: null,
    parallel: 1,
    measure: 'fixed',
  });
}

/**
 * Two runs (a lm-bench result as it is, and a vllm bench serve result with its context), a stopped
 * study with one finished trial (and its objective values), a model and an event: every table has rows.
 */
export function seedDb(dbPath: string): void {
  const store = openStore(dbPath);
  try {
    const a = ingestFiles(store, [join(INGEST_FIXTURES, 'lm-bench-result.json')], {});
    const b = ingestFiles(store, [join(INGEST_FIXTURES, 'vllm-serve-2025.json')], { serverConfig: { max_num_seqs: 128 }, gpu: 'H100-SXM' });
    if (a.accepted + b.accepted !== 2) throw new Error(`seeding the runs failed: ${JSON.stringify([a.rejected, b.rejected])}`);
    const study = store.createStudy(seedSpec());
    const trial = store.createTrial(study.id, { config: { max_num_seqs: 64 }, origin: 'default', state: 'running' });
    store.failTrial(trial.id, { reason: 'seeded: never started', started: false, values: { output_throughput_per_gpu: 0 } });
    store.setStudyState(study.id, 'stopped');
    store.saveModel({ kind: 'seed:not-a-surrogate', blob: new Uint8Array([1, 2, 3]), metadata: { seeded: true }, metrics: {} });
    store.appendEvent({ studyId: study.id, kind: 'seeded', payload: { by: 'test/bad-inputs' } });
    store.appendEvent({ studyId: null, kind: 'seeded', payload: {} });
  } finally {
    store.close();
  }
}

/* -------------------------------------------------------------- row counts */

export type Counts = Readonly<Record<string, number>>;

/** Rows of every table of the SQLite file (null when the file does not exist). */
export function tableCounts(dbPath: string): Counts | null {
  if (!existsSync(dbPath)) return null;
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    const out: Record<string, number> = {};
    for (const { name } of tables) out[name] = (db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n;
    return out;
  } finally {
    db.close();
  }
}

export function countsDiff(before: Counts | null, after: Counts | null): string | null {
  const a = JSON.stringify(before);
  const b = JSON.stringify(after);
  return a === b ? null : `rows changed: before ${a}, after ${b}`;
}

/* ----------------------------------------------------------------- verdicts */

export type Category = 'clear' | 'unclear' | 'crash' | 'partial';
export interface Problem {
  readonly category: Exclude<Category, 'clear'>;
  readonly what: string;
}
export interface Verdict {
  readonly id: string;
  readonly category: Category;
  readonly problems: readonly Problem[];
  /** What the product did, for the defect list (exit/status, code, first line of the message). */
  readonly observed: string;
}

/** A case that wrote rows is a partial write whatever else went wrong; then crashes; then unclear messages. */
const SEVERITY: readonly Category[] = ['partial', 'crash', 'unclear'];

export function verdict(id: string, problems: readonly Problem[], observed: string): Verdict {
  const category = SEVERITY.find((c) => problems.some((p) => p.category === c)) ?? 'clear';
  return { id, category, problems, observed };
}

export function formatVerdict(v: Verdict): string {
  return `${v.id}: ${v.category}\n${v.problems.map((p) => `  - [${p.category}] ${p.what}`).join('\n')}\n  observed: ${v.observed}`;
}

/** Stack traces and source positions that must never reach a user. */
export function stackProblems(text: string): Problem[] {
  const out: Problem[] = [];
  if (/^\s+at .*(:\d+:\d+\)?|\(<anonymous>\)|\(native\))\s*$/m.test(text)) out.push({ category: 'crash', what: 'a stack trace ("    at …" lines) in the output' });
  if (text.includes('node:internal')) out.push({ category: 'crash', what: 'node:internal frames in the output' });
  if (/[\w/.-]+\.[cm]?[tj]s:\d+(:\d+)?/.test(text)) out.push({ category: 'crash', what: 'a source-file position (file.ts:line) in the output' });
  if (/Native stack trace|Fatal error in|FATAL ERROR/.test(text)) out.push({ category: 'crash', what: 'a V8 fatal error (the process aborted)' });
  return out;
}

export function isCatalogCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CATALOG, code);
}

/** The checks shared by CLI and HTTP: the code is in the catalog, is not a bug, is the expected one; the message names the field. */
export function codeProblems(code: string | null, expected: ErrorCode | readonly ErrorCode[] | undefined): Problem[] {
  if (code === null) return [{ category: 'crash', what: 'no error code in the output' }];
  if (!isCatalogCode(code)) return [{ category: 'crash', what: `error code ${code} is not in ERROR_CATALOG` }];
  const out: Problem[] = [];
  if (ERROR_CATALOG[code].kind === 'unexpected') out.push({ category: 'crash', what: `${code}: an internal error (a bug), not a rejection of the input` });
  const want = expected === undefined ? [] : [expected].flat();
  if (want.length > 0 && !want.includes(code)) out.push({ category: 'unclear', what: `code ${code}, expected ${want.join(' or ')}` });
  return out;
}

export function messageProblems(message: string | null, names: RegExp): Problem[] {
  if (message === null || message.trim() === '') return [{ category: 'unclear', what: 'no error message' }];
  const out: Problem[] = [];
  if (!names.test(message)) out.push({ category: 'unclear', what: `the message does not name the offending field/file/line (${String(names)}): ${JSON.stringify(firstLines(message))}` });
  if (/^\s*\[\s*$|"code":\s*"(too_small|too_big|unrecognized_keys|invalid_type)"/m.test(message)) {
    out.push({ category: 'unclear', what: 'the message is a raw zod issue dump, not a sentence' });
  }
  return out;
}

export function firstLines(s: string, n = 3): string {
  return s.split('\n').slice(0, n).join('\n').slice(0, 400);
}

/* ------------------------------------------------------------- reporting */

const recorded: Verdict[] = [];

export function record(v: Verdict): void {
  recorded.push(v);
}

/** Call from `after()`: writes the file's verdicts when LMB_BAD_INPUTS_REPORT names a directory. */
export function flushVerdicts(file: string): void {
  const dir = process.env['LMB_BAD_INPUTS_REPORT'];
  if (dir === undefined || dir === '') return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${file}.json`), `${JSON.stringify(recorded, null, 2)}\n`);
}
