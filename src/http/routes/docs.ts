import type { FastifyPluginCallback } from 'fastify';
import type { ServiceContext } from '../context.js';
import { docsPage, openApiDocument } from '../openapi.js';

/** `GET /openapi.json` and `GET /docs`, built once the other route plugins have listed their routes. */
export const docsRoutes: FastifyPluginCallback<{ ctx: ServiceContext; version: string }> = (app, { ctx, version }, done) => {
  let doc: Record<string, unknown> | undefined;
  let page: string | undefined;
  const build = (): Record<string, unknown> => {
    doc ??= openApiDocument(
      [
        ...ctx.docs,
        { method: 'GET', url: '/openapi.json', summary: 'This document', auth: false, response: { status: 200, contentType: 'application/json' } },
        { method: 'GET', url: '/docs', summary: 'This document as a page (self-contained, works offline)', auth: false, response: { status: 200, contentType: 'text/html' } },
      ],
      { version },
    );
    return doc;
  };
  app.get('/openapi.json', (_req, reply) => reply.send(build()));
  app.get('/docs', (_req, reply) => {
    page ??= docsPage(build());
    return reply.type('text/html; charset=utf-8').send(page);
  });
  done();
};
