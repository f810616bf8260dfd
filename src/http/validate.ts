import type { z } from 'zod';
import { LmBenchError, type ErrorCode } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';

/**
 * Request validation with zod (the one source of shapes), failures as catalog errors naming the
 * field: an unknown key inside a server config is LMB_ERR_UNKNOWN_KNOB, a bad value there
 * LMB_ERR_KNOB_OUT_OF_DOMAIN, anything else LMB_ERR_INVALID_ARGUMENT. fastify's own validation is
 * not used (no type provider is installed): handlers call `parseInput` first.
 */
const CONFIG_FIELDS: ReadonlySet<string> = new Set(['server_config', 'config', 'enqueue']);

export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out;
}

/**
 * Whether a path goes inside a server config: past `server_config` / `config`, or past an entry of
 * `enqueue` (`enqueue[3].max_num_seqs`). The list itself (its length, its type) is not a knob.
 */
function insideConfig(path: readonly PropertyKey[]): boolean {
  return path.some((p, i) => typeof p === 'string' && CONFIG_FIELDS.has(p) && (p !== 'enqueue' || typeof path[i + 1] === 'number'));
}

/**
 * A union (`gpu`: a name or a datasheet; `workload`: a name or a workload) that fails in every branch
 * comes back from zod as one `invalid_union` at the field ("Invalid input"). When one branch alone took
 * the value's type (every other failed at its root: a string expected, an object sent), that branch's
 * first issue is the one to name, under the field's path (`gpu.interconnect.kind`).
 */
function unwrapUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const typed = issue.errors.filter((branch) => !branch.every((i) => i.code === 'invalid_type' && i.path.length === 0));
  const inner = typed.length === 1 ? typed[0]?.[0] : undefined;
  return inner === undefined ? issue : unwrapUnion({ ...inner, path: [...issue.path, ...inner.path] });
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'params'): z.output<S> {
  if (where === 'body' && typeof value === 'string') {
    // fastify hands a text/plain body over as a string: say what the API takes instead of "expected object".
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'body: a JSON object is needed, sent with content-type application/json (this body came as text)', { details: { field: 'content-type' } });
  }
  const res = schema.safeParse(value ?? {});
  if (res.success) return res.data;
  const first = res.error.issues[0];
  if (first === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `invalid ${where}`);
  const issue = unwrapUnion(first);
  const inConfig = insideConfig(issue.path);
  let path = [...issue.path];
  let code: ErrorCode = inConfig ? 'LMB_ERR_KNOB_OUT_OF_DOMAIN' : 'LMB_ERR_INVALID_ARGUMENT';
  if (issue.code === 'unrecognized_keys') {
    path = [...path, issue.keys[0] ?? ''];
    code = inConfig ? 'LMB_ERR_UNKNOWN_KNOB' : 'LMB_ERR_INVALID_ARGUMENT';
  }
  const field = fieldPath(path);
  // The code and details.field come from the first issue; the message names every one, each at its path.
  const message = formatZodIssues(res.error.issues.map(unwrapUnion), undefined, (p) => {
    const f = fieldPath(p);
    return f === '' ? where : `${where}.${f}`;
  });
  throw new LmBenchError(code, message, {
    details: { field: field === '' ? where : field, issues: res.error.issues.length },
  });
}
