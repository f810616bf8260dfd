import { z } from 'zod';
import { ErrorBody } from './schemas.js';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the handlers validate with
 * (`z.toJSONSchema`), and a docs page that renders it with no network access: the document is
 * embedded in the page and drawn by a few lines of inline script, no CDN.
 */
export interface RouteDoc {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** fastify pattern, e.g. `/v1/studies/:id` (written `{id}` in the document). */
  readonly url: string;
  readonly summary: string;
  readonly auth: boolean;
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
  readonly response?: { readonly status: number; readonly schema?: z.ZodType; readonly contentType?: string };
  /** An old name kept working for now: `deprecated: true` in the document (OpenAPI's operation field). */
  readonly deprecated?: boolean;
}

const json = (schema: z.ZodType, io: 'input' | 'output'): unknown => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return rest;
};

export function openApiDocument(routes: readonly RouteDoc[], info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:(\w+)/g, '{$1}');
    const params: unknown[] = [...r.url.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (r.query !== undefined) {
      for (const [name, s] of Object.entries(r.query.shape)) params.push({ name, in: 'query', required: !(s as z.ZodType).safeParse(undefined).success, schema: json(s as z.ZodType, 'input') });
    }
    const status = r.response?.status ?? 200;
    const content = r.response?.schema === undefined ? { [r.response?.contentType ?? 'text/plain']: {} } : { 'application/json': { schema: json(r.response.schema, 'output') } };
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      summary: r.summary,
      ...(r.deprecated === true ? { deprecated: true } : {}),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(r.auth ? { security: [{ bearer: [] }] } : {}),
      ...(r.body === undefined ? {} : { requestBody: { required: true, content: { 'application/json': { schema: json(r.body, 'input') } } } }),
      responses: {
        [String(status)]: { description: 'OK', content },
        '4XX': { description: 'A catalog error (code, message, field)', content: { 'application/json': { schema: json(ErrorBody, 'output') } } },
        ...(r.auth ? { '401': { description: 'Missing or wrong bearer token; nothing changed' } } : {}),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'lm-bench service', version: info.version, description: 'Recommendations, tuning studies and benchmark history for vLLM server configurations.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}

/** A self-contained HTML page: the document inline, rendered by inline script (works offline). */
export function docsPage(doc: Record<string, unknown>): string {
  // `<` escaped so the JSON cannot close the script element.
  const data = JSON.stringify(doc).replaceAll('<', '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lm-bench API</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}.op{border:1px solid #ddd;border-radius:6px;margin:.6rem 0;padding:.5rem .8rem}
.m{display:inline-block;min-width:3.5rem;font-weight:700;font-family:monospace}.GET{color:#07c}.POST{color:#080}
.lock{color:#a60;font-size:.85em;margin-left:.5rem}pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:12px}
summary{cursor:pointer;color:#555}
</style></head><body>
<h1>lm-bench API</h1><p id="desc"></p><div id="ops"></div>
<script id="openapi" type="application/json">${data}</script>
<script>
const doc = JSON.parse(document.getElementById('openapi').textContent);
document.getElementById('desc').textContent = doc.info.description + ' (OpenAPI ' + doc.openapi + ', version ' + doc.info.version + '; raw document: /openapi.json)';
const ops = document.getElementById('ops');
for (const [path, methods] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(methods)) {
    const div = document.createElement('div'); div.className = 'op';
    const m = document.createElement('span'); m.className = 'm ' + method.toUpperCase(); m.textContent = method.toUpperCase();
    const p = document.createElement('code'); p.textContent = path;
    div.append(m, p);
    if (op.security) { const l = document.createElement('span'); l.className = 'lock'; l.textContent = 'bearer token'; div.append(l); }
    if (op.deprecated) { const d = document.createElement('span'); d.className = 'lock'; d.textContent = 'deprecated'; div.append(d); }
    const s = document.createElement('div'); s.textContent = op.summary; div.append(s);
    const add = (title, value) => { const d = document.createElement('details'); const sm = document.createElement('summary'); sm.textContent = title; const pre = document.createElement('pre'); pre.textContent = JSON.stringify(value, null, 2); d.append(sm, pre); div.append(d); };
    if (op.parameters) add('parameters', op.parameters);
    if (op.requestBody) add('request body', op.requestBody.content['application/json'].schema);
    for (const [code, r] of Object.entries(op.responses)) if (r.content && r.content['application/json']) add('response ' + code, r.content['application/json'].schema);
    ops.append(div);
  }
}
</script></body></html>
`;
}
