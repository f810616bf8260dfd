import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import { PLOT_KINDS } from '../../report/study/index.js';
import type { ServiceContext } from '../context.js';
import type { Reporter } from '../reporter.js';
import { StudyIdParams } from '../schemas.js';
import { parseInput } from '../validate.js';

const idOf = (raw: string): number | string => (/^\d+$/.test(raw) ? Number(raw) : raw);
const PlotParams = StudyIdParams.extend({ kind: z.string().regex(/^\w+$/) });

/** `GET /v1/studies/:id/report` (the self-contained HTML report) and one plot as SVG. */
export const reportRoutes: FastifyPluginCallback<{ ctx: ServiceContext; reporter: Reporter }> = (app, { ctx, reporter }, done) => {
  ctx.docs.push(
    { method: 'GET', url: '/v1/studies/:id/report', summary: 'The study report: one self-contained HTML page (Pareto plots, history, importance, predicted vs measured)', auth: false, response: { status: 200, contentType: 'text/html' } },
    { method: 'GET', url: '/v1/studies/:id/plots/:kind.svg', summary: `One plot of the report as SVG (${PLOT_KINDS.join(', ')})`, auth: false, response: { status: 200, contentType: 'image/svg+xml' } },
  );
  app.get('/v1/studies/:id/report', async (req, reply) => {
    const { id } = parseInput(StudyIdParams, req.params, 'params');
    const html = await reporter.report(idOf(id));
    return reply.type('text/html; charset=utf-8').send(html);
  });
  app.get('/v1/studies/:id/plots/:kind.svg', async (req, reply) => {
    const { id, kind } = parseInput(PlotParams, req.params, 'params');
    const svg = await reporter.plot(idOf(id), kind);
    return reply.type('image/svg+xml').send(svg);
  });
  done();
};
