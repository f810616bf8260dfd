/**
 * CLI cases: a table row is an argv with placeholders, the code expected (when the catalog leaves no
 * doubt), a pattern the message must match (the flag, field, file or line it is about) and options.
 * `runCliCase` runs one in-process through `main(argv, captureIo(...))` against the sandbox's seeded
 * database and `judgeCli` turns what happened into a verdict.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';
import {
  CHAT_WORKLOAD,
  codeProblems,
  countsDiff,
  FILES,
  firstLines,
  INGEST_FIXTURES,
  isCatalogCode,
  messageProblems,
  seedDb,
  stackProblems,
  tableCounts,
  verdict,
  type Counts,
  type Problem,
  type Sandbox,
  type Verdict,
} from './harness.js';

export interface CliCase {
  /** Stable id, e.g. `cli-tune-gpus-nan`. */
  readonly id: string;
  /**
   * The command line. Placeholders: `$DB` the seeded database, `$F/` this corpus's files, `$T/` the
   * sandbox directory, `$FX/` test/fixtures/ingest, `$W` data/workloads/chat.yaml.
   */
  readonly argv: readonly string[];
  /** The catalog code the input calls for (several when more than one is defensible). */
  readonly code?: ErrorCode | readonly ErrorCode[];
  /** The message must match this: the offending flag, field, file or line. */
  readonly names: RegExp;
  /** Add --json and read the error from the JSON document on stdout. */
  readonly json?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  /** Run against a freshly seeded copy of the database (the case may write if the product misbehaves). */
  readonly freshDb?: boolean;
}

export interface CliRun {
  readonly exit: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly before: Counts | null;
  readonly after: Counts | null;
  readonly threw?: string;
}

export function expand(argv: readonly string[], sandbox: Pick<Sandbox, 'dir'>, db: string): string[] {
  return argv.map((a) =>
    a
      .replaceAll('$DB', db)
      .replaceAll('$FX/', `${INGEST_FIXTURES}/`)
      .replaceAll('$F/', `${FILES}/`)
      .replaceAll('$T/', `${sandbox.dir}/`)
      .replaceAll('$W', CHAT_WORKLOAD),
  );
}

let fresh = 0;
export function dbFor(c: Pick<CliCase, 'freshDb' | 'id'>, sandbox: Sandbox): string {
  if (c.freshDb !== true) return sandbox.db;
  const db = join(sandbox.dir, `fresh-${++fresh}-${c.id}.db`);
  seedDb(db);
  return db;
}

export async function runCliCase(c: CliCase, sandbox: Sandbox): Promise<CliRun> {
  const db = dbFor(c, sandbox);
  const argv = [...expand(c.argv, sandbox, db), ...(c.json === true ? ['--json'] : [])];
  const io = captureIo(sandbox.dir, { LMB_DB: db, LMB_LOOPBACK_ONLY: '1', ...c.env });
  const before = tableCounts(db);
  let exit: number;
  let threw: string | undefined;
  try {
    exit = await main(argv, io);
  } catch (err) {
    exit = -1;
    threw = err instanceof Error ? (err.stack ?? err.message) : String(err);
  }
  // A copy of a store that a case opened must not be held open: tableCounts opens its own connection.
  const after = tableCounts(db);
  return { exit, stdout: io.out(), stderr: io.err(), before, after, ...(threw === undefined ? {} : { threw }) };
}

/** Code and message of a CLI failure: `lm-bench: error CODE: message`, the --json document, or an ingest rejection. */
export interface ParsedError {
  readonly code: string | null;
  readonly message: string | null;
  /** `error`: the command failed; `rejection`: ingest's summary rejected a file (exit 1 whatever the code). */
  readonly source: 'error' | 'rejection' | null;
  readonly problems: Problem[];
}

export function parseCliError(stdout: string, stderr: string, json: boolean): ParsedError {
  const problems: Problem[] = [];
  if (json) {
    let doc: unknown;
    try {
      doc = JSON.parse(stdout);
    } catch {
      problems.push({ category: 'unclear', what: `--json: stdout is not one JSON document: ${JSON.stringify(firstLines(stdout))}` });
    }
    const d = doc as { error?: { code?: unknown; message?: unknown }; rejected?: { code?: unknown; reason?: unknown; path?: unknown }[] } | undefined;
    if (d?.error !== undefined) return { code: String(d.error.code), message: String(d.error.message), source: 'error', problems };
    const r = d?.rejected?.[0];
    if (r !== undefined) return { code: String(r.code), message: `${String(r.path)}: ${String(r.reason)}`, source: 'rejection', problems };
  }
  const m = /lm-bench: error (LMB_ERR_[A-Z_]+|\S+): ([\s\S]*)$/.exec(stderr);
  if (m !== null) return { code: m[1] ?? null, message: m[2] ?? null, source: 'error', problems };
  const r = /^\s*rejected\s+(.+?): (LMB_ERR_[A-Z_]+) (.*)$/m.exec(stdout);
  if (r !== null) return { code: r[2] ?? null, message: `${r[1] ?? ''}: ${r[3] ?? ''}`, source: 'rejection', problems };
  return { code: null, message: null, source: null, problems };
}

export function judgeCli(c: CliCase, r: CliRun): Verdict {
  const problems: Problem[] = [];
  if (r.threw !== undefined) problems.push({ category: 'crash', what: `main() threw instead of returning an exit status: ${firstLines(r.threw)}` });
  if (r.exit === 0) problems.push({ category: 'crash', what: 'exit status 0: the bad input was accepted' });
  problems.push(...stackProblems(`${r.stdout}\n${r.stderr}`));
  const { code, message, source, problems: parse } = parseCliError(r.stdout, r.stderr, c.json === true);
  problems.push(...parse);
  if (r.exit !== 0) problems.push(...codeProblems(code, c.code));
  // An ingest summary that rejected files exits 1 (documented), whatever each file's code; an error exits with its code's status.
  const wantExit = source === 'rejection' ? ERROR_CATALOG.LMB_ERR_INGEST_REJECTED.exitCode : isCatalogCode(code) ? ERROR_CATALOG[code].exitCode : null;
  if (wantExit !== null && r.exit !== 0 && r.exit !== wantExit) {
    problems.push({ category: 'unclear', what: `exit status ${r.exit}, but the catalog gives ${code ?? ''} exit ${wantExit}` });
  }
  if (r.exit !== 0) problems.push(...messageProblems(message, c.names));
  // A case whose argv repeats one of its base flags is refused for the repeat, and the check it meant never runs.
  if (message !== null && /was given twice/.test(message) && !c.id.includes('twice')) {
    problems.push({ category: 'unclear', what: `the case's own argv gives a flag twice, so the check it meant never ran: ${firstLines(message, 1)}` });
  }
  const diff = countsDiff(r.before, r.after);
  if (diff !== null) problems.push({ category: 'partial', what: diff });
  const shown = message ?? (r.stderr.trim() || r.stdout.trim());
  return verdict(c.id, problems, `exit ${r.exit}; ${code ?? 'no code'}: ${firstLines(shown, 2)}`);
}

/** Helpers to write argv tables compactly. */
export function withFlag(base: readonly string[], flag: string, value?: string): string[] {
  const out = [...base];
  const i = out.indexOf(flag);
  if (value === undefined) {
    if (i >= 0) out.splice(i, 2);
    return out;
  }
  if (i >= 0) out[i + 1] = value;
  else out.push(flag, value);
  return out;
}

export function copyInto(sandbox: Sandbox, from: string, name: string): string {
  const to = join(sandbox.dir, name);
  copyFileSync(from, to);
  return to;
}
