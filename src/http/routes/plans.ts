import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import { datasheetToCarry } from '../../catalog/gpu-file.js';
import { Slo, VllmVersion, type Hardware } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { assertGpuFitsHistory } from '../../store/adopt-gpu.js';
import { PlanAnswer, PlanObjective } from '../../plan/types.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { gpuOf, workloadOf, type ServiceContext } from '../context.js';
import type { Planner } from '../planner.js';
import { GpuRef, WorkloadRef } from '../schemas.js';
import { parseInput } from '../validate.js';

/** The GPU types a plan compares when the question names none (as `lm-bench plan`). */
const DEFAULT_GPUS = ['H100-SXM', 'A100-80GB', 'L40S', 'B200'];

export const PlanRequest = z
  .strictObject({
    model: z.string().min(1),
    workload: WorkloadRef,
    /** Open-loop requests a second (Poisson), or… */
    rate_rps: z.number().positive().finite().max(1e6).optional(),
    /** …closed-loop users: exactly one of the two. */
    users: z.int().positive().max(1_000_000).optional(),
    /** Default: the workload's own `slo`. */
    slo: Slo.optional(),
    gpus: z.array(GpuRef).min(1).max(16).optional(),
    max_gpus: z.int().min(1).max(4096).default(64),
    objective: PlanObjective.default('usd_per_mtok'),
    seed: z.int().nonnegative().default(1),
    /** The vLLM release the deployments will run, which the simulator imitates (default: a current one). */
    vllm_version: VllmVersion.optional(),
    /** `html`: the plan as a self-contained HTML page instead of JSON. */
    format: z.enum(['json', 'html']).default('json'),
  })
  .superRefine((b, ctx) => {
    if ((b.rate_rps === undefined) === (b.users === undefined)) ctx.addIssue({ code: 'custom', path: ['rate_rps'], message: 'give exactly one of rate_rps (requests a second) or users (closed-loop users)' });
  });

/** `POST /v1/plans`: the same planner as `lm-bench plan`, in a worker thread; reads the history, stores nothing. */
export const planRoutes: FastifyPluginCallback<{ ctx: ServiceContext; planner: Planner }> = (app, { ctx, planner }, done) => {
  ctx.docs.push({
    method: 'POST',
    url: '/v1/plans',
    summary: 'Which GPUs, how many, at what price: per GPU type the deployment that serves the traffic within the SLOs, ranked (format=html for the page)',
    auth: false,
    body: PlanRequest,
    response: { status: 200, schema: PlanAnswer },
  });
  app.post('/v1/plans', async (req, reply) => {
    const body = parseInput(PlanRequest, req.body, 'body');
    const workload = workloadOf(ctx, body.workload);
    const slo = body.slo ?? workload.slo ?? {};
    if (Object.keys(slo).length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'body.slo: no SLO in the question or the workload; a plan sizes for latency limits', { details: { field: 'slo' } });
    const hardware = body.gpus === undefined ? DEFAULT_GPUS.map((g) => gpuOf(ctx, g)) : body.gpus.map((g, i) => gpuOf(ctx, g, `gpus[${i}]`));
    // A datasheet may not borrow the history (and so the correction) of another GPU filed under its id.
    const datasheets = hardware.map((h) => datasheetToCarry(h, ctx.catalog)).filter((h): h is Hardware => h !== undefined);
    for (const d of datasheets) assertGpuFitsHistory(ctx.store, d);
    const resolved = identifyResolvedModel(ctx.store, await ctx.resolveModel(body.model), ctx.catalog);
    const res = await planner.plan({
      question: {
        model: resolved.spec.id,
        workload,
        traffic: body.rate_rps !== undefined ? { kind: 'rate', rate_rps: body.rate_rps } : { kind: 'users', users: body.users ?? 1 },
        slo,
        gpus: [...new Set(hardware.map((h) => h.id))],
        maxGpus: body.max_gpus,
        objective: body.objective,
        seed: body.seed,
        vllmVersion: body.vllm_version,
      },
      modelSpec: resolved.spec,
      hardwareSpecs: datasheets,
      html: body.format === 'html',
    });
    if (res.html !== null) return reply.type('text/html; charset=utf-8').send(res.html);
    return reply.send(res.answer);
  });
  done();
};
