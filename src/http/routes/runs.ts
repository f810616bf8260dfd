import type { FastifyPluginCallback } from 'fastify';
import { ALL_KNOB_NAMES, coerceKnobValue, isKnobName, validateServerConfig, type ServerConfig } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import type { RunFilter } from '../../store/store.js';
import { adoptResolvedModel, identifyResolvedModel } from '../../store/adopt-model.js';
import type { ServiceContext } from '../context.js';
import { ingestBody } from '../ingest-body.js';
import { IngestRequest, IngestResponse, RunsPage, RunsQuery } from '../schemas.js';
import { parseInput } from '../validate.js';

/**
 * `config.<knob>=value` query filters → a validated partial config (unknown knob → 400 naming it). The
 * value is read as the CLI's `--set` reads it (`coerceKnobValue`), so one filter means one thing.
 */
export function configFilter(query: Record<string, unknown>): { rest: Record<string, unknown>; config: ServerConfig | undefined } {
  const rest: Record<string, unknown> = {};
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    if (!k.startsWith('config.')) {
      rest[k] = v;
      continue;
    }
    // Knob names are taken as vLLM spells them (`max_num_seqs`), not in the CLI's dashed form.
    const knob = k.slice('config.'.length);
    if (!isKnobName(knob)) throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `query.${k}: unknown knob "${knob}"; known: ${ALL_KNOB_NAMES.join(', ')}`, { details: { field: k } });
    raw[knob] = coerceKnobValue(knob, String(Array.isArray(v) ? v[0] : v), { label: `query.${k}`, field: k });
  }
  if (Object.keys(raw).length === 0) return { rest, config: undefined };
  return { rest, config: validateServerConfig(raw, 'query') };
}

/** `POST /v1/runs` (ingest, all-or-nothing) and `GET /v1/runs` (filtered, paginated). */
export const runRoutes: FastifyPluginCallback<{ ctx: ServiceContext }> = (app, { ctx }, done) => {
  ctx.docs.push(
    {
      method: 'POST',
      url: '/v1/runs',
      summary: 'Ingest benchmark results (vLLM bench serve/sweep/nightly, GuideLLM, genai-perf, lm-bench) with their server config; all files or none',
      auth: true,
      body: IngestRequest,
      response: { status: 201, schema: IngestResponse },
    },
    { method: 'GET', url: '/v1/runs', summary: 'Stored runs, newest first; filter by model, gpu, gpus, source_format and config.<knob>=value', auth: false, query: RunsQuery, response: { status: 200, schema: RunsPage } },
  );
  app.post('/v1/runs', { onRequest: ctx.auth }, async (req, reply) => {
    const body = parseInput(IngestRequest, req.body, 'body');
    if (body.gpu !== undefined) ctx.catalog.gpu(body.gpu);
    const resolved = body.model === undefined ? undefined : await ctx.resolveModel(body.model);
    // The runs name the checkpoint by its id in the history; its spec is stored once a run is.
    const model = resolved === undefined ? undefined : identifyResolvedModel(ctx.store, resolved, ctx.catalog).spec.id;
    const out = ingestBody(ctx.store, ctx.catalog, { ...body, ...(model === undefined ? {} : { model }) });
    if (resolved !== undefined && out.accepted > 0) adoptResolvedModel(ctx.store, resolved, ctx.catalog);
    return reply.status(201).send(out);
  });
  app.get('/v1/runs', async (req, reply) => {
    const { rest, config } = configFilter(req.query as Record<string, unknown>);
    const q = parseInput(RunsQuery, rest, 'query');
    const model = q.model === undefined ? undefined : identifyResolvedModel(ctx.store, await ctx.resolveModel(q.model), ctx.catalog).spec.id;
    const filter: RunFilter = {
      ...(model === undefined ? {} : { model }),
      ...(q.gpu === undefined ? {} : { gpu: ctx.catalog.gpu(q.gpu).id }),
      ...(q.gpus === undefined ? {} : { gpuCount: q.gpus }),
      ...(q.source_format === undefined ? {} : { sourceFormat: q.source_format }),
      ...(config === undefined ? {} : { config: config as NonNullable<RunFilter['config']> }),
    };
    return reply.send({ total: ctx.store.countRuns(filter), limit: q.limit, offset: q.offset, runs: ctx.store.listRuns({ ...filter, limit: q.limit, offset: q.offset }) });
  });
  done();
};
