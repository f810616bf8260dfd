import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { defaultCatalog, type Catalog } from '../catalog/index.js';
import { resolveModel } from '../catalog/resolve-model.js';
import { LmBenchError } from '../errors.js';
import { loadSpace } from '../space/index.js';
import type { Store } from '../store/store.js';
import { requireToken } from './auth.js';
import { DEFAULT_SPACE_PATH, ServiceConfig, type ServiceConfigInput } from './config.js';
import { bundledWorkloads, withoutFileText, type ServiceContext } from './context.js';
import { asServiceError, errorBody, installErrorHandlers } from './error-handler.js';
import { installMetrics } from './metrics.js';
import { createRecommender } from './recommender.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { surrogateRoutes } from './routes/surrogates.js';
import { recommendationRoutes } from './routes/recommendations.js';
import { reportRoutes } from './routes/reports.js';
import { createReporter } from './reporter.js';
import { createPlanner } from './planner.js';
import { planRoutes } from './routes/plans.js';
import { runRoutes } from './routes/runs.js';
import { studyRoutes } from './routes/studies.js';
import { StudyManager } from './study-manager.js';
import { createTrainer } from './trainer.js';

/**
 * The HTTP service as a fastify instance that never listens (fastify/demo's `app.ts`; `server.ts`
 * listens). The app owns what it is given: on close it stops the studies (grace period, then they
 * are left to resume), closes the worker pools and closes the store.
 */
export interface AppDeps {
  readonly store: Store;
  /** The store's SQLite file: the worker threads (studies, recommendations, reports, plans) open it by path. */
  readonly dbPath: string;
  readonly config?: ServiceConfigInput;
  /** The bearer token for writes; null refuses every write. */
  readonly token: string | null;
  readonly catalog?: Catalog;
  readonly now?: () => number;
  readonly logger?: FastifyServerOptions['logger'];
  /** Resume the studies the store says are running once the app is ready (default true). */
  readonly resumeStudies?: boolean;
  readonly version?: string;
  /** Where model names resolve (HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE); default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const config = ServiceConfig.parse(deps.config ?? {});
  const now = deps.now ?? Date.now;
  const catalog = deps.catalog ?? defaultCatalog();
  const spacePath = config.space ?? DEFAULT_SPACE_PATH;
  const space = loadSpace(spacePath);
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: config.body_limit_bytes,
    // Timeouts so a slow client cannot hold a connection forever.
    connectionTimeout: 60_000,
    requestTimeout: 120_000,
    keepAliveTimeout: 10_000,
    return503OnClosing: true,
    // Study names run to 200 characters (schemas.ts) and `/v1/studies/:id` takes a name: find-my-way's
    // default limit of 100 answered a longer one with fastify's own 414, so a study could not be named.
    routerOptions: { maxParamLength: 256 },
    // A URL the router cannot decode (`%zz`) or a parameter past that limit: the catalog's error shape too.
    frameworkErrors: (err, _req, reply) => {
      const e = asServiceError(err);
      void (reply as FastifyReply).status(e.httpStatus).send(errorBody(e));
    },
  });
  // The routes that take no body (stop, resume, DELETE) are often sent `content-type: application/json`
  // with nothing after it: an empty JSON body is no body, not a 400 (a route that needs one then names
  // its missing fields). Anything else is parsed as fastify parses it (prototype poisoning refused).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    // fastify's own parser is synchronous: it has called `done` when it returns.
    void parseJson(req, text, done);
  });
  const recommender = createRecommender({ store: deps.store, dbPath: deps.dbPath, spacePath, threads: config.recommend_threads, now });
  const trainer = createTrainer({ store: deps.store, catalog, space, onSaved: () => recommender.invalidate() });
  const reporter = createReporter({ store: deps.store, dbPath: deps.dbPath });
  const planner = createPlanner({ dbPath: deps.dbPath });
  // `metrics` is installed below (it reads the studies running); trials finish only once the app runs.
  const onTrialFinished = (state: string): void => {
    metrics.trialsFinished.inc({ state });
  };
  const studies = new StudyManager({ store: deps.store, dbPath: deps.dbPath, spacePath, catalog, space, targets: config.targets, now, log: app.log, onTrialFinished, maxRunning: config.limits.running_studies });
  const ctx: ServiceContext = {
    store: deps.store,
    catalog,
    space,
    config,
    studies,
    recommender,
    planner,
    trainer,
    workloads: bundledWorkloads(),
    now,
    resolveModel: async (name) => {
      try {
        return await resolveModel(name, { catalog, env: deps.env ?? process.env, pathRoots: config.model_dirs, option: 'model' });
      } catch (err) {
        throw withoutFileText(err);
      }
    },
    auth: requireToken(deps.token),
    docs: [],
  };
  if (deps.token === null) app.log.warn('no API token configured (LMB_API_TOKEN or token_file): every write is refused with 401');

  installErrorHandlers(app);
  const metrics = installMetrics(app, { store: deps.store, studiesRunning: () => studies.running, latestModel: () => recommender.latestModel(), now });
  await app.register(rateLimit, {
    max: config.rate_limit.max,
    timeWindow: config.rate_limit.window_ms,
    errorResponseBuilder: (_req, c) => {
      const e = new LmBenchError('LMB_ERR_RATE_LIMITED', `rate limit: at most ${c.max} requests per ${c.after}`);
      return Object.assign(new Error(e.message), { statusCode: 429, ...errorBody(e) });
    },
  });
  await app.register(healthRoutes, { ctx, metrics });
  await app.register(recommendationRoutes, { ctx });
  await app.register(planRoutes, { ctx, planner });
  await app.register(runRoutes, { ctx });
  await app.register(studyRoutes, { ctx });
  await app.register(surrogateRoutes, { ctx });
  await app.register(reportRoutes, { ctx, reporter });
  await app.register(docsRoutes, { ctx, version: deps.version ?? '0.1.0' });

  if (deps.resumeStudies !== false) {
    app.addHook('onReady', (done) => {
      const resumed = studies.resumeRunning();
      if (resumed.length > 0) app.log.info({ studies: resumed }, 'resumed studies that were running');
      done();
    });
  }
  app.addHook('onClose', async () => {
    const { finished, left } = await studies.shutdown(config.shutdown_grace_ms, () => deps.store.close());
    if (finished + left > 0) app.log.info({ finished, left }, 'studies stopped for shutdown; they resume on the next start');
    await Promise.allSettled([recommender.close(), trainer.close(), reporter.close(), planner.close()]);
  });
  return app;
}
