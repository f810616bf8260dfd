import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { PROJECT_ROOT } from '../../src/catalog/index.js';

/**
 * llm-d's Benchmark Report v0.2 JSON Schema (test/fixtures/llm-d-br/README.md: source, commit,
 * licence), compiled once with ajv in strict mode. The schema is pydantic's export: it carries two
 * keywords that are not JSON Schema — `discriminator` (OpenAPI's, with a `mapping` ajv does not take;
 * the `oneOf` beside it already tells the components apart by their `kind` const) and `ge` (pydantic's
 * bound, which the schema also states as anyOf of numbers) — declared here as annotations, so strict
 * mode still refuses any other keyword it does not know. `date-time` is RFC 3339, checked here.
 */
export const BR_FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'llm-d-br');

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

const ajv = new Ajv2020({ allErrors: true, strict: true });
ajv.addKeyword('discriminator');
ajv.addKeyword('ge');
ajv.addFormat('date-time', (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)));

const validator = ajv.compile(JSON.parse(readFileSync(join(BR_FIXTURES, 'br_v0_2_json_schema.json'), 'utf8')) as object);

/** The schema's complaints about a document, as `path: message` lines; empty when it is valid. */
export function brSchemaErrors(doc: unknown): string[] {
  if (validator(doc)) return [];
  return (validator.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}

type Key = string | number;

/** The value at a path of a parsed document; undefined where the path stops. */
export function at(doc: unknown, ...path: readonly Key[]): unknown {
  let cur: unknown = doc;
  for (const k of path) cur = cur !== null && typeof cur === 'object' ? (cur as Record<Key, unknown>)[k] : undefined;
  return cur;
}

/** The object at a path (for mutating a copy in a test); throws where there is none. */
export function objectAt(doc: unknown, ...path: readonly Key[]): Record<Key, unknown> {
  const o = at(doc, ...path);
  if (o === null || typeof o !== 'object') throw new Error(`no object at ${path.join('.')}`);
  return o as Record<Key, unknown>;
}
