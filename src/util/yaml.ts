import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { z } from 'zod';
import { LmBenchError, type ErrorCode } from '../errors.js';

/** Alias expansions a document may use before it is refused as a resource-exhaustion attempt. */
const MAX_ALIAS_COUNT = 100;

export interface SchemaIssue {
  readonly path: string;
  readonly line: number | null;
  readonly message: string;
}

/**
 * Parses YAML (or JSON, a subset) and validates it with a zod schema. Every problem is reported at
 * once, each with its dotted path and the line it sits on, in one LmBenchError naming the file.
 */
export function parseYaml<S extends z.ZodType>(
  text: string,
  schema: S,
  opts: { file: string; code?: ErrorCode },
): z.output<S> {
  const code = opts.code ?? 'LMB_ERR_CONFIG_INVALID';
  const lineCounter = new LineCounter();
  // Merge keys (`<<: *defaults`) are YAML 1.1, but users write them in configs (compose files, CI) and
  // the library otherwise keeps "<<" as a field, which a strict schema then calls unknown.
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter, merge: true });
  if (doc.errors.length > 0) {
    const issues: SchemaIssue[] = doc.errors.map((e) => ({
      path: '',
      line: e.linePos?.[0].line ?? null,
      message: e.message.split('\n')[0] ?? e.message,
    }));
    throw schemaError(code, opts.file, issues);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // The yaml library refuses a document whose aliases expand past the limit (a "billion laughs").
    throw schemaError(code, opts.file, [{ path: '', line: null, message: `too many YAML alias expansions (more than ${MAX_ALIAS_COUNT}); refusing the document (${err instanceof Error ? err.message : String(err)})` }]);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: SchemaIssue[] = result.error.issues.map((issue) => {
    const path = issue.path.map(String);
    // An unknown field is reported at its own line, not at the line of the object holding it.
    const at = issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined ? [...path, issue.keys[0]] : path;
    return { path: path.join('.'), line: lineOf(doc, lineCounter, at), message: describeIssue(issue) };
  });
  throw schemaError(code, opts.file, issues);
}

/**
 * The text of a file a user named (a config, a workload, a sidecar): a missing path, a directory or an
 * unreadable file is LMB_ERR_FILE_NOT_FOUND naming the path (and the flag or field, when given).
 */
export function readUserFile(file: string, what = 'file'): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why = code === 'EISDIR' ? 'is a directory, not a file' : code === 'ENOENT' ? 'does not exist' : `cannot be read (${String(code ?? err)})`;
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${what} ${file} ${why}`, { cause: err, details: { file } });
  }
}

/** Reads and validates a YAML file; a missing file is LMB_ERR_FILE_NOT_FOUND. */
export function loadYamlFile<S extends z.ZodType>(file: string, schema: S, code?: ErrorCode): z.output<S> {
  const text = readUserFile(file);
  return parseYaml(text, schema, code === undefined ? { file } : { file, code });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return issue.message;
}

function lineOf(doc: ReturnType<typeof parseDocument>, lc: LineCounter, path: string[]): number | null {
  // Walk up the path until a node exists: a missing field is reported at its parent's line.
  for (let n = path.length; n >= 0; n--) {
    const keys = path.slice(0, n).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    const node: unknown = n === 0 ? doc.contents : doc.getIn(keys, true);
    if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
  }
  return null;
}

export function schemaError(code: ErrorCode, file: string, issues: SchemaIssue[]): LmBenchError {
  const lines = issues.map((i) => {
    const where = i.line === null ? file : `${file}:${i.line}`;
    return `${where}: ${i.path === '' ? '' : `${i.path}: `}${i.message}`;
  });
  return new LmBenchError(code, lines.join('\n'), { details: { file, issues } });
}
