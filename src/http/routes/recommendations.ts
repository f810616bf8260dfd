import type { FastifyPluginCallback } from 'fastify';
import { gpuOf, workloadOf, type ServiceContext } from '../context.js';
import { RecommendationRequest, RecommendationResponse } from '../schemas.js';
import { parseInput } from '../validate.js';
import { LmBenchError } from '../../errors.js';
import { objectivesFor, studyObjectiveOf } from '../../optimize/objectives.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { assertGpuFitsHistory } from '../../store/adopt-gpu.js';
import { datasheetToCarry } from '../../catalog/gpu-file.js';

/** `POST /v1/recommendations`: the same core as `lm-bench recommend`, from the cached trained model. */
export const recommendationRoutes: FastifyPluginCallback<{ ctx: ServiceContext }> = (app, { ctx }, done) => {
  ctx.docs.push({
    method: 'POST',
    url: '/v1/recommendations',
    summary: 'The recommended vLLM configuration under the SLOs: predicted metrics with intervals, the Pareto set, the command line and config YAML, and how far to trust it',
    auth: false,
    body: RecommendationRequest,
    response: { status: 200, schema: RecommendationResponse },
  });
  app.post('/v1/recommendations', async (req, reply) => {
    const body = parseInput(RecommendationRequest, req.body, 'body');
    // The answer's rule follows the objectives' first axis (optimize/objectives.ts `studyObjectiveOf`):
    // an `objective` with `objectives` that stand for another one would be answered by the wrong rule.
    if (body.objective !== undefined && body.objectives !== undefined && studyObjectiveOf({ objectives: body.objectives }) !== body.objective) {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `body.objective: "${body.objective}" disagrees with body.objectives (which stand for "${studyObjectiveOf({ objectives: body.objectives })}"); give one of them`, { details: { field: 'objective' } });
    }
    const objectives = body.objectives ?? (body.objective === undefined || body.objective === 'goodput' ? undefined : objectivesFor(body.objective));
    const hardware = gpuOf(ctx, body.gpu);
    // A GPU the catalog lacks travels with the question (the worker's catalog has only data/hardware.yaml),
    // and may not borrow the history of another GPU filed under its id.
    const datasheet = datasheetToCarry(hardware, ctx.catalog);
    assertGpuFitsHistory(ctx.store, datasheet);
    // A question stores nothing: the model gets the id its checkpoint has in the history.
    const resolved = identifyResolvedModel(ctx.store, await ctx.resolveModel(body.model), ctx.catalog);
    const model = resolved.spec;
    const workload = workloadOf(ctx, body.workload);
    const max = ctx.config.limits.recommend_candidates;
    if (body.candidates !== undefined && body.candidates > max) {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `body.candidates: at most ${max}`, { details: { field: 'candidates' } });
    }
    const { json } = await ctx.recommender.ask({
      gpu: hardware.id,
      gpus: body.gpus,
      model: model.id,
      workload,
      // The commands in the answer name the workload file: a bundled one by its path, one sent inline as workload.yaml.
      workloadRef: typeof body.workload === 'string' ? `data/workloads/${body.workload}.yaml` : 'workload.yaml',
      slo: body.slo ?? workload.slo ?? {},
      objectives,
      candidates: body.candidates ?? ctx.config.recommend_candidates,
      seed: body.seed,
      keepPrecision: body.keep_precision,
      vllmVersion: body.vllm_version,
    }, { spec: model, configHash: resolved.config_hash }, datasheet);
    return reply.type('application/json; charset=utf-8').send(json);
  });
  done();
};
