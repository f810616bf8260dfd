import type { FastifyPluginCallback } from 'fastify';
import { StudySpec } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { objectivesFor } from '../../optimize/objectives.js';
import { identifyResolvedModel, studyModelFields } from '../../store/adopt-model.js';
import { studyGpuFields } from '../../store/adopt-gpu.js';
import { bindSimProfile } from '../../targets/sim-target.js';
import { countsAgainstBudget } from '../../tune/loop.js';
import { gpuOf, workloadOf, type ServiceContext } from '../context.js';
import { StudyAccepted, StudyDetail, StudyIdParams, StudyList, StudyRequest } from '../schemas.js';
import { parseInput } from '../validate.js';

const idOf = (raw: string): number | string => (/^\d+$/.test(raw) ? Number(raw) : raw);

/** Studies run in the background against a target profile from the service's config. */
export const studyRoutes: FastifyPluginCallback<{ ctx: ServiceContext }> = (app, { ctx }, done) => {
  ctx.docs.push(
    { method: 'POST', url: '/v1/studies', summary: 'Create a tuning study and start it in the background against a target profile of the service config', auth: true, body: StudyRequest, response: { status: 202, schema: StudyAccepted } },
    { method: 'GET', url: '/v1/studies', summary: 'All studies with their progress', auth: false, response: { status: 200, schema: StudyList } },
    { method: 'GET', url: '/v1/studies/:id', summary: 'One study (by id or name): progress, trials, measured Pareto front and the recommendation', auth: false, response: { status: 200, schema: StudyDetail } },
    { method: 'POST', url: '/v1/studies/:id/stop', summary: 'Stop a study: no new trials; running trials finish', auth: true, response: { status: 202, schema: StudyAccepted } },
    { method: 'DELETE', url: '/v1/studies/:id', summary: 'Cancel a study now: running trials are cancelled (Slurm jobs with scancel) and re-run on resume; its trials stay in the history', auth: true, response: { status: 202, schema: StudyAccepted } },
    { method: 'POST', url: '/v1/studies/:id/resume', summary: 'Resume a stopped study where it left off', auth: true, response: { status: 202, schema: StudyAccepted } },
  );

  const accepted = (id: number) => {
    const s = ctx.store.getStudy(id);
    return { id: s.id, name: s.spec.name, state: s.state, active: ctx.studies.isActive(s.id), queued: ctx.studies.isQueued(s.id) };
  };

  app.post('/v1/studies', { onRequest: ctx.auth }, async (req, reply) => {
    const body = parseInput(StudyRequest, req.body, 'body');
    // Resolved before anything is stored; the spec is recorded with the study when it is created.
    const resolved = await ctx.resolveModel(body.model);
    const hw = gpuOf(ctx, body.gpu);
    // A datasheet rides in the study's spec (workers, a resume, the report find the GPU by it).
    const gpuFields = studyGpuFields(hw, body.gpus, ctx.catalog);
    const target = bindSimProfile(ctx.studies.profile(body.target), ctx.store, ctx.catalog, hw);
    const limits = ctx.config.limits;
    if (body.budget_trials > limits.budget_trials) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `body.budget_trials: at most ${limits.budget_trials}`, { details: { field: 'budget_trials' } });
    if (body.parallel > limits.parallel) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `body.parallel: at most ${limits.parallel}`, { details: { field: 'parallel' } });
    const workload = workloadOf(ctx, body.workload);
    const spec = StudySpec.parse({
      name: body.name,
      space: ctx.space.files.length === 1 ? ctx.space.files[0] : ctx.space.files.join(','),
      ...gpuFields,
      ...studyModelFields(identifyResolvedModel(ctx.store, resolved, ctx.catalog)),
      workload,
      slo: body.slo ?? workload.slo ?? {},
      // The objective picks the study's final configuration; `objectives`, when given, are the sampler's axes.
      objectives: body.objectives ?? objectivesFor(body.objective ?? 'goodput'),
      ...(body.objective === undefined ? {} : { objective: body.objective }),
      target: JSON.stringify(target),
      seed: body.seed,
      budget_trials: body.budget_trials,
      budget_hours: body.budget_hours ?? null,
      parallel: body.parallel,
      measure: body.measure,
    });
    const id = ctx.studies.create(spec, { profile: body.target, sampler: body.sampler }, body.enqueue, { origin: resolved.origin, location: resolved.location });
    return reply.status(202).header('location', `/v1/studies/${id}`).send(accepted(id));
  });

  app.get('/v1/studies', (_req, reply) => {
    const studies = ctx.store.listStudies().map((s) => {
      const trials = ctx.store.listTrials(s.id);
      return {
        id: s.id,
        name: s.spec.name,
        state: s.state,
        active: ctx.studies.isActive(s.id),
        queued: ctx.studies.isQueued(s.id),
        trials: trials.length,
        complete: trials.filter((t) => t.state === 'complete').length,
        budget_trials: s.spec.budget_trials,
        created_at_ms: s.created_at_ms,
        updated_at_ms: s.updated_at_ms,
      };
    });
    return reply.send({ studies });
  });

  app.get('/v1/studies/:id', (req, reply) => {
    const { id } = parseInput(StudyIdParams, req.params, 'params');
    const summary = ctx.studies.summary(idOf(id));
    const trials = ctx.store.listTrials(summary.study.id);
    return reply.send({
      ...summary,
      active: ctx.studies.isActive(summary.study.id),
      queued: ctx.studies.isQueued(summary.study.id),
      progress: {
        counted: trials.filter(countsAgainstBudget).length,
        budget_trials: summary.study.spec.budget_trials,
        running: trials.filter((t) => t.state === 'running').length,
        waiting: trials.filter((t) => t.state === 'waiting').length,
      },
    });
  });

  app.post('/v1/studies/:id/stop', { onRequest: ctx.auth }, (req, reply) => {
    const { id } = parseInput(StudyIdParams, req.params, 'params');
    return reply.status(202).send(accepted(ctx.studies.stop(idOf(id))));
  });

  app.delete('/v1/studies/:id', { onRequest: ctx.auth }, (req, reply) => {
    const { id } = parseInput(StudyIdParams, req.params, 'params');
    return reply.status(202).send(accepted(ctx.studies.cancel(idOf(id))));
  });

  app.post('/v1/studies/:id/resume', { onRequest: ctx.auth }, (req, reply) => {
    const { id } = parseInput(StudyIdParams, req.params, 'params');
    return reply.status(202).send(accepted(ctx.studies.resume(idOf(id))));
  });
  done();
};
