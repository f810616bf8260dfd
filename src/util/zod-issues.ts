import type { z } from 'zod';

/**
 * The one way a zod failure becomes text: every issue, each under its path, joined by "; " —
 * `a.b: expected number; c: required`. Reporting only the first issue sends a user round the
 * fix-one-rerun loop once per mistake; callers keep choosing the error code and the prefix that names
 * the file, line or flag (`where`).
 */

/** A dotted path (`workload.arrival.rate`, list indices as numbers: `stages.1.rate`). */
export function dottedPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/**
 * Where an issue points: its path, and for one unknown key the key itself (`server_config.max_num_seq`),
 * since the object holding it is not what the user mistyped.
 */
export function issuePath(issue: z.core.$ZodIssue): PropertyKey[] {
  return issue.code === 'unrecognized_keys' && issue.keys.length === 1 ? [...issue.path, issue.keys[0] as string] : [...issue.path];
}

/** An issue's message; one unknown key is already named by its path (`issuePath`). */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return issue.keys.length === 1 ? 'unknown field' : `unknown fields ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return issue.message;
}

/** One issue as `path: message` (just the message when it is about the whole value). */
export function formatZodIssue(issue: z.core.$ZodIssue, pathOf: (path: readonly PropertyKey[]) => string = dottedPath): string {
  const path = pathOf(issuePath(issue));
  return path === '' ? issueMessage(issue) : `${path}: ${issueMessage(issue)}`;
}

/** Every issue, `; `-joined, after `where: ` when given. */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[], where?: string, pathOf?: (path: readonly PropertyKey[]) => string): string {
  // The same text twice (two list entries failing alike, with the path left out) is said once.
  const text = issues.length === 0 ? 'invalid' : [...new Set(issues.map((i) => formatZodIssue(i, pathOf)))].join('; ');
  return where === undefined || where === '' ? text : `${where}: ${text}`;
}
