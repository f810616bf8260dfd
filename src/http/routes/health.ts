import type { FastifyPluginCallback } from 'fastify';
import type { ServiceContext } from '../context.js';
import type { ServiceMetrics } from '../metrics.js';
import { Health } from '../schemas.js';

/** `GET /health` (store reachable, recommendation worker answering) and `GET /metrics`. */
export const healthRoutes: FastifyPluginCallback<{ ctx: ServiceContext; metrics: ServiceMetrics }> = (app, { ctx, metrics }, done) => {
  ctx.docs.push(
    { method: 'GET', url: '/health', summary: 'Liveness: the store answers and the workers are alive (503 otherwise)', auth: false, response: { status: 200, schema: Health } },
    { method: 'GET', url: '/metrics', summary: 'Prometheus metrics: request latency by route, trials by state, studies running, model age', auth: false, response: { status: 200, contentType: 'text/plain' } },
  );
  // Probes and scrapes are exempt from the rate limit: a client flooding the API (behind a local proxy
  // every client shares one address) must not turn the liveness probe into 429s and get the service restarted.
  const probe = { config: { rateLimit: false } } as const;
  app.get('/health', probe, async (_req, reply) => {
    let store: 'ok' | 'failed' = 'ok';
    let modelId: number | null = null;
    try {
      ctx.store.countRuns();
      modelId = ctx.recommender.latestModel()?.id ?? null;
    } catch {
      store = 'failed';
    }
    const recommend = (await ctx.recommender.ping()) ? 'ok' : 'failed';
    const ok = store === 'ok' && recommend === 'ok';
    return reply.status(ok ? 200 : 503).send({
      status: ok ? 'ok' : 'degraded',
      store,
      workers: { recommend, recommend_threads: ctx.recommender.threads, training: ctx.trainer.busy },
      studies_running: ctx.studies.running,
      surrogate_id: modelId,
    });
  });
  app.get('/metrics', probe, async (_req, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
  done();
};
