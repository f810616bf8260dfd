/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- the OpenAPI document is read loosely; the assertions check it */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tempDb, testApp } from './helpers.js';

// docs/api.md's table of routes is hand-written: this keeps it to the routes the service has, with the
// token the service asks for, as the OpenAPI document (generated from the same route list) says.

const API_DOC = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

interface DocRow {
  readonly routes: readonly string[];
  readonly auth: string;
}

/** The rows of the "Contents" table: the `METHOD /path`s of each and its auth column. */
function contentRows(): DocRow[] {
  const start = API_DOC.indexOf('\n## Contents\n');
  assert.ok(start >= 0, 'docs/api.md has a Contents table');
  const body = API_DOC.slice(start + 1).split(/\n## /)[0] ?? '';
  return body
    .split('\n')
    .filter((l) => l.startsWith('| ['))
    .map((l) => {
      const cells = l.split(' | ');
      return { routes: [...(cells[0] ?? '').matchAll(/`((?:GET|POST|DELETE|PUT|PATCH) \/[^`]*)`/g)].map((m) => m[1] ?? ''), auth: (cells[1] ?? '').trim() };
    });
}

test('docs/api.md lists every route the service has, with the token it asks for', async (t) => {
  const app = await testApp(t, tempDb(t));
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const served = new Map<string, boolean>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown }>>)) {
    for (const [method, op] of Object.entries(ops)) served.set(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`, op.security !== undefined);
  }
  const rows = contentRows();
  const documented = rows.flatMap((r) => r.routes);
  assert.deepEqual([...new Set(documented)].sort(), [...served.keys()].sort(), 'docs/api.md "Contents" against GET /openapi.json');
  for (const row of rows) {
    if (row.routes.length !== 1) continue;
    const route = row.routes[0] ?? '';
    assert.equal(row.auth === 'token', served.get(route), `${route}: auth column "${row.auth}"`);
  }
});

test('docs/api.md and the OpenAPI document name every plot kind the service draws', async (t) => {
  const { PLOT_KINDS } = await import('../../src/report/study/index.js');
  const reports = API_DOC.slice(API_DOC.indexOf('\n## Reports\n')).split(/\n## /)[1] ?? '';
  const plots = reports.slice(reports.indexOf('/plots/'));
  const listed = [...(/\(([^)]*)\)/.exec(plots)?.[1] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]);
  assert.deepEqual(listed, [...PLOT_KINDS], 'docs/api.md "Reports"');
  const app = await testApp(t, tempDb(t));
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const summary: string = doc.paths['/v1/studies/{id}/plots/{kind}.svg'].get.summary;
  for (const kind of PLOT_KINDS) assert.ok(summary.includes(kind), `the OpenAPI summary names ${kind}`);
});
