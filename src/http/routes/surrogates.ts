import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { ServiceContext } from '../context.js';
import { SurrogateList, TrainRequestBody, TrainResponse } from '../schemas.js';
import { parseInput } from '../validate.js';

/**
 * `POST /v1/surrogates/train` (fits in the piscina fit pool) and `GET /v1/surrogates`: the surrogate,
 * as `lm-bench surrogate train` names it, so that "model" means the LLM. `POST /v1/models/train` and
 * `GET /v1/models` are their old names, kept as deprecated aliases for one release: the same handlers,
 * answered with `Deprecation: true` and a `Link` to the new path (RFC 9745, RFC 8288 successor-version).
 */
const ROUTES = {
  train: { path: '/v1/surrogates/train', old: '/v1/models/train' },
  list: { path: '/v1/surrogates', old: '/v1/models' },
} as const;

const deprecated = (reply: FastifyReply, successor: string): FastifyReply => reply.header('deprecation', 'true').header('link', `<${successor}>; rel="successor-version"`);

export const surrogateRoutes: FastifyPluginCallback<{ ctx: ServiceContext }> = (app, { ctx }, done) => {
  const trainSummary = 'Train the surrogate on every run in the store (fits in worker threads); answers when it is saved';
  const listSummary = 'Trained surrogates, newest first (without their blobs)';
  const train = { auth: true, body: TrainRequestBody, response: { status: 201, schema: TrainResponse } } as const;
  const list = { auth: false, response: { status: 200, schema: SurrogateList } } as const;
  ctx.docs.push(
    { method: 'POST', url: ROUTES.train.path, summary: trainSummary, ...train },
    { method: 'GET', url: ROUTES.list.path, summary: listSummary, ...list },
    { method: 'POST', url: ROUTES.train.old, summary: `Deprecated: the old name of POST ${ROUTES.train.path} (same handler; answers with a Deprecation header)`, deprecated: true, ...train },
    { method: 'GET', url: ROUTES.list.old, summary: `Deprecated: the old name of GET ${ROUTES.list.path} (same handler; answers with a Deprecation header)`, deprecated: true, ...list },
  );
  const trainHandler = async (body: unknown, reply: FastifyReply): Promise<FastifyReply> => reply.status(201).send(await ctx.trainer.train(parseInput(TrainRequestBody, body, 'body')));
  const listHandler = (reply: FastifyReply): FastifyReply => reply.send({ models: ctx.store.listModels() });
  app.post(ROUTES.train.path, { onRequest: ctx.auth }, (req, reply) => trainHandler(req.body, reply));
  app.get(ROUTES.list.path, (_req, reply) => listHandler(reply));
  // The header goes on before auth and validation run, so a 401 or 400 on the old path carries it too.
  const markTrain = async (_req: unknown, reply: FastifyReply): Promise<void> => {
    deprecated(reply, ROUTES.train.path);
  };
  app.post(ROUTES.train.old, { onRequest: [markTrain, ctx.auth] }, (req, reply) => trainHandler(req.body, reply));
  app.get(ROUTES.list.old, (_req, reply) => listHandler(deprecated(reply, ROUTES.list.path)));
  done();
};
