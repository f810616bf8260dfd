/**
 * The bad-input corpus, HTTP part: every row of http-cases.ts sent with `app.inject` to an app over a
 * seeded SQLite file. Each must get a 4xx (never a 5xx) with `{"error": {code, kind, message, details}}`,
 * a catalog code whose HTTP status is the one returned, a message naming the field, no stack trace,
 * and no row added or removed in any table.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { ERROR_CATALOG } from '../../src/errors.js';
import { openStore } from '../../src/store/index.js';
import { HTTP_CASES, TOKEN, type HttpCase } from './http-cases.js';
import {
  codeProblems,
  countsDiff,
  firstLines,
  flushVerdicts,
  formatVerdict,
  isCatalogCode,
  makeSandbox,
  messageProblems,
  record,
  seedDb,
  stackProblems,
  tableCounts,
  verdict,
  type Problem,
  type Sandbox,
  type Verdict,
} from './harness.js';

type AppName = NonNullable<HttpCase['app']>;
let sb: Sandbox;
const apps = new Map<AppName, { app: FastifyInstance; db: string }>();

async function makeApp(name: AppName): Promise<void> {
  const db = name === 'main' ? sb.db : join(sb.dir, `${name}.db`);
  if (name !== 'main') seedDb(db);
  const app = await buildApp({
    store: openStore(db),
    dbPath: db,
    token: name === 'no-token' ? null : TOKEN,
    config: {
      recommend_candidates: 500,
      shutdown_grace_ms: 0,
      rate_limit: name === 'rate-limited' ? { max: 2, window_ms: 60_000 } : { max: 100_000, window_ms: 60_000 },
      targets: { sim: { kind: 'sim' } },
    },
    resumeStudies: false,
  });
  await app.ready();
  apps.set(name, { app, db });
}

before(async () => {
  sb = makeSandbox('http');
  for (const name of ['main', 'no-token', 'rate-limited'] as const) await makeApp(name);
});
after(async () => {
  for (const { app } of apps.values()) await app.close();
  flushVerdicts('http');
  sb.cleanup();
});

const AUTH_HEADERS: Record<NonNullable<HttpCase['auth']>, Record<string, string>> = {
  ok: { authorization: `Bearer ${TOKEN}` },
  none: {},
  wrong: { authorization: 'Bearer wrong-token-wrong-token-000' },
  basic: { authorization: 'Basic dXNlcjpwYXNzd29yZA==' },
  empty: { authorization: 'Bearer ' },
};

async function send(c: HttpCase, app: FastifyInstance): Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }> {
  const headers: Record<string, string> = { ...AUTH_HEADERS[c.auth ?? 'ok'] };
  let payload: string | Buffer | undefined;
  if (c.raw !== undefined) {
    payload = c.raw.payload;
    if (c.raw.contentType !== undefined) headers['content-type'] = c.raw.contentType;
  } else if (c.body !== undefined) {
    payload = JSON.stringify(c.body);
    headers['content-type'] = 'application/json';
  }
  const res = await app.inject({ method: c.method, url: c.url, headers, ...(payload === undefined ? {} : { payload }) });
  return { statusCode: res.statusCode, body: res.body, headers: res.headers };
}

export function judgeHttp(c: HttpCase, res: { statusCode: number; body: string }, diff: string | null): Verdict {
  const problems: Problem[] = [];
  const s = res.statusCode;
  if (s >= 500) problems.push({ category: 'crash', what: `HTTP ${s}: a server error, not a rejection of the input` });
  else if (s < 400) problems.push({ category: 'crash', what: `HTTP ${s}: the bad request was accepted` });
  if (c.status !== undefined && s !== c.status && s >= 400 && s < 500) problems.push({ category: 'unclear', what: `HTTP ${s}, expected ${c.status}` });
  problems.push(...stackProblems(res.body));
  let code: string | null = null;
  let message: string | null = null;
  let err: { code?: unknown; kind?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    err = (JSON.parse(res.body) as { error?: typeof err }).error;
  } catch {
    problems.push({ category: s >= 400 && s < 500 ? 'unclear' : 'crash', what: `the body is not JSON: ${JSON.stringify(firstLines(res.body))}` });
  }
  if (s >= 400) {
    if (err === undefined || typeof err.code !== 'string' || typeof err.kind !== 'string' || typeof err.message !== 'string' || typeof err.details !== 'object' || err.details === null) {
      problems.push({ category: 'unclear', what: `the body is not {"error": {code, kind, message, details}}: ${JSON.stringify(firstLines(res.body))}` });
    }
    code = typeof err?.code === 'string' ? err.code : null;
    message = typeof err?.message === 'string' ? err.message : null;
    problems.push(...codeProblems(code, c.code));
    if (isCatalogCode(code)) {
      if (ERROR_CATALOG[code].httpStatus !== s) problems.push({ category: 'unclear', what: `HTTP ${s}, but the catalog gives ${code} HTTP ${ERROR_CATALOG[code].httpStatus}` });
      if (err?.kind !== ERROR_CATALOG[code].kind) problems.push({ category: 'unclear', what: `kind ${String(err?.kind)}, but the catalog gives ${code} kind ${ERROR_CATALOG[code].kind}` });
    }
    problems.push(...messageProblems(message, c.names));
  }
  if (diff !== null) problems.push({ category: 'partial', what: diff });
  return verdict(c.id, problems, `HTTP ${s}; ${code ?? 'no code'}: ${firstLines(message ?? res.body, 2)}`);
}

describe('bad inputs: HTTP', () => {
  const ids = new Set<string>();
  for (const c of HTTP_CASES) {
    assert.ok(!ids.has(c.id), `duplicate case id ${c.id}`);
    ids.add(c.id);
    it(c.id, async () => {
      const target = apps.get(c.app ?? 'main');
      assert.ok(target !== undefined);
      const beforeCounts = tableCounts(target.db);
      let res = await send(c, target.app);
      for (let i = 1; i < (c.repeat ?? 1); i++) res = await send(c, target.app);
      const v = judgeHttp(c, res, countsDiff(beforeCounts, tableCounts(target.db)));
      record(v);
      assert.equal(v.category, 'clear', formatVerdict(v));
    });
  }
});
