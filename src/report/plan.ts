import { formatSloString } from '../domain/index.js';
import type { PlanAnswer, PlanDeployment } from '../plan/types.js';
import { chartSection, escapeHtml, htmlPage, type Cell, type Section } from './html.js';
import type { VlSpec } from './render.js';

/**
 * The HTML page of a plan (issue 25): the ranked deployments as a table, the cost of each GPU type
 * against its GPU count and its energy per token, the pick marked, and the infeasible GPU types with
 * their reasons. Pure apart from SVG rendering.
 */
type Datum = Record<string, number | string | null>;

/**
 * A figure at `decimals`, with two significant digits where that shows fewer: a plan for a trickle of
 * traffic once read "0 output tok/s" beside a finite J/token, and a headroom of 0.04 req/s "0.0 req/s"
 * for a deployment that serves 0.03.
 */
export function figureText(x: number, decimals: number): string {
  return x !== 0 && Math.abs(x) < 10 ** (1 - decimals) ? String(Number(x.toPrecision(2))) : x.toFixed(decimals);
}

/** A deployment's headroom in words: "≥" where the search passed every probe up to its cap. */
export function headroomText(d: PlanDeployment): string | null {
  const figure = d.max_rate_rps !== null ? `${figureText(d.max_rate_rps, 1)} req/s` : d.max_users !== null ? `${d.max_users} users` : null;
  return figure === null ? null : `${d.headroom_lower_bound ? '≥ ' : ''}${figure}`;
}

const trafficText = (a: PlanAnswer): string => (a.traffic.kind === 'rate' ? `${a.traffic.rate_rps} requests/s` : `${a.traffic.users} users`);

function costSpec(rows: readonly PlanDeployment[], pick: string | null): VlSpec {
  const data: Datum[] = rows.map((d) => ({ gpu: d.gpu, gpus: d.gpus, usd: d.usd_per_million_output_tokens, j: d.energy_per_output_token_j, pick: d.gpu === pick ? 'the pick' : 'other' }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 460,
    height: 260,
    data: { values: data },
    mark: { type: 'point', filled: true, size: 120, tooltip: true },
    encoding: {
      x: { field: 'gpus', type: 'quantitative', title: 'GPUs for the traffic', scale: { zero: true } },
      y: { field: 'usd', type: 'quantitative', title: '$ per million output tokens', scale: { zero: true } },
      color: { field: 'gpu', type: 'nominal', title: 'GPU' },
      shape: { field: 'pick', type: 'nominal', title: '' },
    },
  };
}

function energySpec(rows: readonly PlanDeployment[]): VlSpec {
  const data: Datum[] = rows.filter((d) => d.energy_per_output_token_j !== null).map((d) => ({ gpu: d.gpu, j: d.energy_per_output_token_j, w: d.avg_power_w }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 460,
    height: 220,
    data: { values: data },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x: { field: 'gpu', type: 'nominal', title: 'GPU', sort: null },
      y: { field: 'j', type: 'quantitative', title: 'joules per output token' },
    },
  };
}

export async function planReportHtml(a: PlanAnswer, opts: { generatedAt?: string; interactive?: boolean } = {}): Promise<string> {
  const feasible = a.deployments.filter((d) => d.feasible);
  const pick = feasible[0] ?? null;
  const slo = formatSloString(a.slo).replaceAll('=', ' ≤ ').replaceAll(',', ', ');
  const sections: Section[] = [
    {
      kind: 'text',
      text:
        pick === null
          ? `No GPU type asked about serves ${trafficText(a)} of ${a.model} within ${slo}: the reasons are listed below.`
          : `For ${a.model} at ${trafficText(a)} within ${slo}, the pick is ${pick.gpus} × ${pick.gpu} (${pick.replicas} replica${pick.replicas === 1 ? '' : 's'} of TP ${pick.tensor_parallel_size}): ranked by ${a.rule}. Figures marked estimated are the simulator's${a.vllm_version === null ? '' : ` imitating vLLM ${a.vllm_version}`} (±${(pick.uncertainty_pct ?? 0).toFixed(0)}% at 2σ on throughput); measured ones are corrected by your own runs of this model on that GPU.`,
    },
  ];
  const columns = ['#', 'GPU', 'GPUs', 'replicas × TP', 'p99 TTFT (ms)', 'p99 ITL (ms)', 'headroom', 'output tok/s', 'power (W)', '$/h', '$/M output tokens', 'J/token', 'source'];
  const rows: Cell[][] = feasible.map((d, i) => [
    i + 1,
    d.gpu,
    d.gpus,
    `${d.replicas ?? '?'} × ${d.tensor_parallel_size ?? '?'}`,
    d.p99_ttft_ms,
    d.p99_itl_ms,
    headroomText(d),
    d.output_throughput_tok_s,
    d.avg_power_w,
    d.usd_per_hour,
    d.usd_per_million_output_tokens,
    d.energy_per_output_token_j,
    d.source,
  ]);
  sections.push({ kind: 'table', title: 'Deployments, best first', columns, rows });
  if (pick !== null) sections.push({ kind: 'html', title: 'The pick, as a command', html: `<pre>${escapeHtml(pick.vllm_command ?? '')}</pre>` });
  if (feasible.length > 0) sections.push(await chartSection('Cost against size', costSpec(feasible, pick?.gpu ?? null)));
  if (feasible.some((d) => d.energy_per_output_token_j !== null)) sections.push(await chartSection('Energy per output token', energySpec(feasible)));
  const infeasible = a.deployments.filter((d) => !d.feasible);
  if (infeasible.length > 0) sections.push({ kind: 'table', title: 'GPU types that cannot serve this traffic', columns: ['GPU', 'why'], rows: infeasible.map((d) => [d.gpu, d.reason]) });
  const prices = [...new Set(feasible.map((d) => d.price_source).filter((s): s is string => s !== null))];
  if (prices.length > 0) sections.push({ kind: 'text', title: 'Prices', text: prices.join('\n\n') });
  return htmlPage({ title: `Plan: ${a.model}`, sections, ...(opts.generatedAt === undefined ? {} : { generatedAt: opts.generatedAt }), ...(opts.interactive === undefined ? {} : { interactive: opts.interactive }) });
}

