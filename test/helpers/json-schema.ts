import assert from 'node:assert/strict';
import type { z } from 'zod';

/** Paths of the keys `sent` has and `parsed` lacks: what a stripping zod object dropped. */
function droppedKeys(sent: unknown, parsed: unknown, path: string, out: string[]): string[] {
  if (Array.isArray(sent) && Array.isArray(parsed)) sent.forEach((v, i) => droppedKeys(v, parsed[i], `${path}[${i}]`, out));
  else if (sent !== null && typeof sent === 'object' && parsed !== null && typeof parsed === 'object') {
    for (const [k, v] of Object.entries(sent)) {
      if (!Object.hasOwn(parsed, k)) out.push(`${path}.${k}`);
      else droppedKeys(v, (parsed as Record<string, unknown>)[k], `${path}.${k}`, out);
    }
  }
  return out;
}

/**
 * A JSON document parsed with the schema that declares it: every issue fails (all of them listed), and
 * so does every key the schema does not name (zod objects drop unknown keys silently, which would let a
 * stray camelCase key through).
 */
export function assertMatchesSchema(schema: z.ZodType, sent: unknown, label: string): void {
  const r = schema.safeParse(sent);
  if (!r.success) assert.fail(`${label}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  const dropped = [...new Set(droppedKeys(sent, r.data, '', []).map((p) => p.replace(/\[\d+\]/g, '[]')))];
  assert.deepEqual(dropped, [], `${label}: keys the schema does not declare`);
}
