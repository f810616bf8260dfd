import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { formatZodIssues } from '../../src/util/zod-issues.js';

const Schema = z.strictObject({ a: z.strictObject({ b: z.number() }), c: z.string(), list: z.array(z.int()).optional() });

function issuesOf(value: unknown): z.core.$ZodIssue[] {
  const r = Schema.safeParse(value);
  assert.equal(r.success, false);
  return r.success ? [] : r.error.issues;
}

test('formatZodIssues reports every issue, each under its path', () => {
  const issues = issuesOf({ a: { b: 'x' } });
  assert.equal(issues.length, 2, 'two bad fields');
  const text = formatZodIssues(issues);
  const parts = text.split('; ');
  assert.equal(parts.length, 2, text);
  assert.match(parts[0] ?? '', /^a\.b: .*expected number/);
  assert.match(parts[1] ?? '', /^c: .*expected string/);
  assert.equal(formatZodIssues(issues, 'cfg.yaml'), `cfg.yaml: ${text}`);
});

test('an unknown key is named by its path; list indices are path segments; repeats are said once', () => {
  assert.equal(formatZodIssues(issuesOf({ a: { b: 1, x: 2 }, c: 's' })), 'a.x: unknown field');
  assert.match(formatZodIssues(issuesOf({ a: { b: 1 }, c: 's', p: 1, q: 2 })), /^unknown fields "p", "q"$/);
  const list = issuesOf({ a: { b: 1 }, c: 's', list: [1.5, 2, 2.5] });
  assert.match(formatZodIssues(list), /^list\.0: .*; list\.2: /);
  assert.equal(formatZodIssues(list, '--flag', () => '').split('; ').length, 1, 'without paths the two alike read once');
  assert.equal(formatZodIssues([]), 'invalid');
});
