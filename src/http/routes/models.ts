import type { FastifyPluginCallback } from 'fastify';
import type { ServiceContext } from '../context.js';
import { ModelList, TrainRequestBody, TrainResponse } from '../schemas.js';
import { parseInput } from '../validate.js';

/** `POST /v1/models/train` (fits in the piscina fit pool) and `GET /v1/models`. */
export const modelRoutes: FastifyPluginCallback<{ ctx: ServiceContext }> = (app, { ctx }, done) => {
  ctx.docs.push(
    { method: 'POST', url: '/v1/models/train', summary: 'Train the surrogate on every run in the store (fits in worker threads); answers when it is saved', auth: true, body: TrainRequestBody, response: { status: 201, schema: TrainResponse } },
    { method: 'GET', url: '/v1/models', summary: 'Trained models, newest first (without their blobs)', auth: false, response: { status: 200, schema: ModelList } },
  );
  app.post('/v1/models/train', { preHandler: ctx.auth }, async (req, reply) => {
    const body = parseInput(TrainRequestBody, req.body, 'body');
    return reply.status(201).send(await ctx.trainer.train(body));
  });
  app.get('/v1/models', (_req, reply) => reply.send({ models: ctx.store.listModels() }));
  done();
};
