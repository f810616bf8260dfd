import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TrialState } from '../domain/index.js';
import type { Store } from '../store/store.js';

/**
 * Prometheus metrics for `GET /metrics`, on a registry of the app's own (two apps in one process —
 * tests, a restart — never collide): request latency by route, trials by state, studies the
 * service is running, and the age of the latest surrogate. Store-derived gauges are computed at
 * scrape time.
 */
export interface ServiceMetrics {
  readonly registry: Registry;
  readonly trialsFinished: Counter;
}

export function installMetrics(
  app: FastifyInstance,
  deps: { store: Store; studiesRunning: () => number; latestModel: () => { createdAtMs: number } | null; now: () => number; defaultMetrics?: boolean },
): ServiceMetrics {
  const registry = new Registry();
  if (deps.defaultMetrics === true) collectDefaultMetrics({ register: registry, prefix: 'lmb_' });
  const latency = new Histogram({
    name: 'lmb_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'lmb_trials',
    help: 'Trials in the store by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.reset();
      const counts = new Map<string, number>(TrialState.options.map((s) => [s, 0]));
      for (const s of deps.store.listStudies()) for (const t of deps.store.listTrials(s.id)) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'lmb_studies_running',
    help: 'Studies this service is running now',
    registers: [registry],
    collect() {
      this.set(deps.studiesRunning());
    },
  });
  new Gauge({
    name: 'lmb_model_age_seconds',
    help: 'Age of the latest trained surrogate (absent when none is trained)',
    registers: [registry],
    collect() {
      this.reset();
      const m = deps.latestModel();
      if (m !== null) this.set((deps.now() - m.createdAtMs) / 1000);
    },
  });
  const trialsFinished = new Counter({ name: 'lmb_trials_finished_total', help: 'Trials this service finished', labelNames: ['state'], registers: [registry] });

  const started = new WeakMap<object, bigint>();
  app.addHook('onRequest', (req, _reply, done) => {
    started.set(req, process.hrtime.bigint());
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const t0 = started.get(req);
    if (t0 !== undefined) {
      // The route pattern, not the URL, so ids do not explode the label set.
      const route = req.routeOptions.url ?? 'unmatched';
      latency.observe({ method: req.method, route, status_code: String(reply.statusCode) }, Number(process.hrtime.bigint() - t0) / 1e9);
    }
    done();
  });
  return { registry, trialsFinished };
}
