import type { KnobValue } from '../../domain/index.js';
import type { VlSpec } from '../render.js';
import type { HistoryData } from './data/history.js';
import type { CdfRow } from './data/latency.js';
import type { ImportanceBar, ParityData, PdRow } from './data/model-plots.js';
import type { EnergyTradeData } from './data/energy.js';
import type { ParetoData, ParetoMetric, ParetoPoint } from './data/pareto.js';

/**
 * Vega-Lite specs of the study report, one builder per plot, from the data objects alone. Layers are
 * named (`measured`, `predicted`, …) so the marks can be found in the SVG (`<name>_marks`) by tests.
 * Tooltips carry each point's full configuration: every knob is a field of its datum.
 */
const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/**
 * Layers are built as plain records (vega-lite's union types do not follow them through helpers);
 * vega-lite checks the spec when it compiles, and the tests render every plot.
 */
function asSpec(s: Record<string, unknown>): VlSpec {
  return s as unknown as VlSpec;
}
type Datum = Record<string, string | number | boolean | null>;
type Tip = { field: string; type: 'quantitative' | 'nominal'; title?: string; format?: string };

/** Null colours show grey instead of dropping the point (a result without server metrics has no memory figure). */
const CONFIG = { scale: { invalid: { color: { value: '#9e9e9e' } } }, view: { stroke: '#ddd' } };

const TARGET_TITLES: Record<string, string> = {
  output_throughput_per_gpu: 'output tok/s per GPU',
  ttft_p99_ms: 'p99 TTFT (ms)',
  itl_p99_ms: 'p99 ITL (ms)',
  energy_per_output_token_j: 'J per output token',
};
export const targetTitle = (t: string): string => TARGET_TITLES[t] ?? t;

function knobsOf(points: readonly { readonly config: Readonly<Record<string, KnobValue>> }[]): string[] {
  const set = new Set<string>();
  for (const p of points) for (const k of Object.keys(p.config)) set.add(k);
  return [...set];
}

function paretoDatum(p: ParetoPoint): Datum {
  const d: Datum = {
    kind: p.kind,
    trial: p.trial,
    // A re-measured configuration is the mean of its runs: the tooltip names them.
    runs: p.runs.length > 1 ? p.runs.join(', ') : null,
    origin: p.origin,
    latencyMs: p.latencyMs,
    latencyLowMs: p.latencyLowMs,
    latencyHighMs: p.latencyHighMs,
    throughputPerGpu: p.throughputPerGpu,
    throughputLow: p.throughputLow,
    throughputHigh: p.throughputHigh,
    memoryGib: p.memoryGib,
    status: p.kind === 'predicted' ? 'predicted' : p.dominated ? 'dominated' : 'Pareto',
    meetsSlo: p.meetsSlo === null ? 'predicted' : p.meetsSlo ? 'yes' : 'no',
    recommended: p.recommended,
  };
  for (const [k, v] of Object.entries(p.config)) d[`cfg_${k}`] = v;
  return d;
}

/** The x axis of a Pareto plot: its title, its tooltip's title and format, the plot's title. */
// J/token spans a narrow range on one deployment: a log scale rounded out to powers of ten would flatten it.
const PARETO_X: Record<ParetoMetric, { readonly axis: string; readonly tip: string; readonly format: string; readonly title: string; readonly nice: boolean }> = {
  ttft: { axis: 'p99 TTFT (ms, log scale)', tip: 'p99 TTFT (ms)', format: '.1f', title: 'Throughput per GPU vs p99 TTFT', nice: true },
  itl: { axis: 'p99 ITL (ms, log scale)', tip: 'p99 ITL (ms)', format: '.1f', title: 'Throughput per GPU vs p99 ITL', nice: true },
  energy: { axis: 'joules per output token, all GPUs (log scale)', tip: 'J per output token', format: '.4f', title: 'Throughput per GPU vs joules per output token', nice: false },
};

/** The SLO's limit as a dashed vertical rule with its label, on a latency x axis. */
function sloRuleLayers(sloLimit: { readonly key: string; readonly limitMs: number }, x: (field: string) => Record<string, unknown>): Record<string, unknown>[] {
  const slo = [{ limit: sloLimit.limitMs, label: `SLO ${sloLimit.key} ≤ ${sloLimit.limitMs} ms` }];
  return [
    { name: 'slo', data: { values: slo }, mark: { type: 'rule', color: '#c0392b', strokeDash: [6, 4], strokeWidth: 1.5 }, encoding: { x: x('limit') } },
    { name: 'slo_label', data: { values: slo }, mark: { type: 'text', color: '#c0392b', align: 'right', dx: -4, baseline: 'top', dy: 2 }, encoding: { x: x('limit'), y: { value: 0 }, text: { field: 'label' } } },
  ];
}

export function paretoSpec(data: ParetoData): VlSpec {
  const px = PARETO_X[data.metric];
  const xTitle = px.axis;
  const yTitle = 'output tokens/s per GPU';
  const x = (field: string): Record<string, unknown> => ({ field, type: 'quantitative', title: xTitle, scale: px.nice ? { type: 'log' } : { type: 'log', nice: false, padding: 12 } });
  const y = (field: string): Record<string, unknown> => ({ field, type: 'quantitative', title: yTitle });
  const tips: Tip[] = [
    { field: 'kind', type: 'nominal' },
    { field: 'trial', type: 'nominal' },
    { field: 'runs', type: 'nominal', title: 'mean of trials' },
    { field: 'origin', type: 'nominal' },
    { field: 'status', type: 'nominal', title: 'front' },
    { field: 'meetsSlo', type: 'nominal', title: 'meets SLOs' },
    { field: 'throughputPerGpu', type: 'quantitative', title: yTitle, format: '.0f' },
    { field: 'latencyMs', type: 'quantitative', title: px.tip, format: px.format },
    { field: 'memoryGib', type: 'quantitative', title: 'GPU memory (GiB)', format: '.1f' },
    ...knobsOf(data.points).map((k): Tip => ({ field: `cfg_${k}`, type: 'nominal', title: k })),
  ];
  const values = data.points.map(paretoDatum);
  const color = { field: 'memoryGib', type: 'quantitative', title: 'GPU memory (GiB)', scale: { scheme: 'viridis' } };
  const layer: Record<string, unknown>[] = [];
  if (data.slo !== null) layer.push(...sloRuleLayers(data.slo, x));
  if (data.front.length > 0) {
    layer.push({ name: 'front', data: { values: data.front }, mark: { type: 'line', interpolate: 'step-after', color: '#444', strokeWidth: 1, opacity: 0.6 }, encoding: { x: x('latencyMs'), y: y('throughputPerGpu') } });
  }
  const predicted = { filter: "datum.kind === 'predicted'" };
  const measured = { filter: "datum.kind === 'measured'" };
  layer.push(
    { name: 'interval_x', transform: [predicted], mark: { type: 'rule', color: '#7f8c8d', opacity: 0.6 }, encoding: { x: x('latencyLowMs'), x2: { field: 'latencyHighMs' }, y: y('throughputPerGpu') } },
    { name: 'interval_y', transform: [predicted], mark: { type: 'rule', color: '#7f8c8d', opacity: 0.6 }, encoding: { x: x('latencyMs'), y: y('throughputLow'), y2: { field: 'throughputHigh' } } },
    {
      name: 'measured',
      transform: [measured],
      mark: { type: 'point', shape: 'circle', filled: true, size: 80, stroke: '#222', strokeWidth: 0.5 },
      encoding: { x: x('latencyMs'), y: y('throughputPerGpu'), color, opacity: { condition: { test: "datum.status === 'dominated'", value: 0.25 }, value: 1 }, tooltip: tips },
    },
    {
      name: 'predicted',
      transform: [predicted],
      mark: { type: 'point', shape: 'diamond', filled: false, size: 110, strokeWidth: 2 },
      encoding: { x: x('latencyMs'), y: y('throughputPerGpu'), color, tooltip: tips },
    },
    { name: 'recommended', transform: [{ filter: 'datum.recommended' }], mark: { type: 'point', shape: 'circle', filled: false, size: 420, color: '#000', strokeWidth: 2 }, encoding: { x: x('latencyMs'), y: y('throughputPerGpu'), tooltip: tips } },
    { name: 'recommended_label', transform: [{ filter: 'datum.recommended' }], mark: { type: 'text', dx: 14, dy: -12, align: 'left', fontWeight: 'bold' }, encoding: { x: x('latencyMs'), y: y('throughputPerGpu'), text: { value: 'recommended' } } },
  );
  return asSpec({
    $schema: SCHEMA,
    title: { text: px.title, subtitle: '● measured (faint: dominated)   ◇ predicted, with ±2σ intervals   ○ recommended' },
    width: 480,
    height: 320,
    data: { values },
    layer,
    config: CONFIG,
  });
}

const OBJECTIVE_WORDS: Record<EnergyTradeData['objective'], string> = {
  goodput: 'most throughput per GPU',
  tokens_per_joule: 'fewest joules per token',
  usd_per_mtok: 'fewest $ per million tokens',
};

/**
 * The energy–latency trade: joules per output token against p99 TTFT, one point per measured
 * configuration (its runs averaged) coloured by its batch limit (max_num_seqs, log scale), faint where it missed the SLOs, the staircase
 * of the SLO-meeting front, the TTFT SLO as a line and the study's pick ringed and labelled with its rule.
 */
export function energyTradeSpec(data: EnergyTradeData): VlSpec {
  const x = (field: string): Record<string, unknown> => ({ field, type: 'quantitative', title: 'p99 TTFT (ms, log scale)', scale: { type: 'log' } });
  const y = (field: string): Record<string, unknown> => ({ field, type: 'quantitative', title: 'joules per output token, all GPUs (log scale)', scale: { type: 'log', nice: false, padding: 12 } });
  const tips: Tip[] = [
    { field: 'trial', type: 'nominal' },
    { field: 'runs', type: 'nominal', title: 'mean of trials' },
    { field: 'origin', type: 'nominal' },
    { field: 'meetsSlo', type: 'nominal', title: 'meets SLOs' },
    { field: 'jPerToken', type: 'quantitative', title: 'J per output token', format: '.4f' },
    { field: 'avgPowerW', type: 'quantitative', title: 'average power, all GPUs (W)', format: '.0f' },
    { field: 'throughputPerGpu', type: 'quantitative', title: 'output tokens/s per GPU', format: '.0f' },
    { field: 'ttftMs', type: 'quantitative', title: 'p99 TTFT (ms)', format: '.1f' },
    { field: 'batch', type: 'quantitative', title: 'max_num_seqs' },
    ...knobsOf(data.points).map((k): Tip => ({ field: `cfg_${k}`, type: 'nominal', title: k })),
  ];
  const values = data.points.map((p) => {
    const d: Datum = {
      trial: p.trial,
      runs: p.runs.length > 1 ? p.runs.join(', ') : null,
      origin: p.origin,
      ttftMs: p.ttftMs,
      jPerToken: p.jPerToken,
      avgPowerW: p.avgPowerW,
      throughputPerGpu: p.throughputPerGpu,
      batch: p.batch,
      meetsSlo: p.meetsSlo ? 'yes' : 'no',
      front: p.onFront,
      recommended: p.recommended,
    };
    for (const [k, v] of Object.entries(p.config)) d[`cfg_${k}`] = v;
    return d;
  });
  const layer: Record<string, unknown>[] = [];
  if (data.slo !== null) layer.push(...sloRuleLayers(data.slo, x));
  if (data.front.length > 0) {
    layer.push({ name: 'front', data: { values: data.front }, mark: { type: 'line', interpolate: 'step-after', color: '#444', strokeWidth: 1, opacity: 0.6 }, encoding: { x: x('ttftMs'), y: y('jPerToken') } });
  }
  const label = `picked: ${OBJECTIVE_WORDS[data.objective]}`;
  layer.push(
    {
      name: 'trials',
      mark: { type: 'point', shape: 'circle', filled: true, size: 80, stroke: '#222', strokeWidth: 0.5 },
      encoding: {
        x: x('ttftMs'),
        y: y('jPerToken'),
        color: { field: 'batch', type: 'quantitative', title: 'max_num_seqs', scale: { type: 'log', scheme: 'viridis' } },
        opacity: { condition: { test: "datum.meetsSlo === 'no'", value: 0.25 }, value: 1 },
        tooltip: tips,
      },
    },
    { name: 'recommended', transform: [{ filter: 'datum.recommended' }], mark: { type: 'point', shape: 'circle', filled: false, size: 420, color: '#000', strokeWidth: 2 }, encoding: { x: x('ttftMs'), y: y('jPerToken'), tooltip: tips } },
    { name: 'recommended_label', transform: [{ filter: 'datum.recommended' }], mark: { type: 'text', dx: 14, dy: -12, align: 'left', fontWeight: 'bold' }, encoding: { x: x('ttftMs'), y: y('jPerToken'), text: { value: label } } },
  );
  const left = data.withoutEnergy > 0 ? `; ${data.withoutEnergy} measured trial(s) without a power figure left out` : '';
  return asSpec({
    $schema: SCHEMA,
    title: { text: 'Energy against latency: joules per output token vs p99 TTFT', subtitle: `● measured, coloured by max_num_seqs (faint: missed the SLOs); a bigger batch saves joules at a latency cost   ○ the pick${left}` },
    width: 480,
    height: 320,
    data: { values },
    layer,
    config: CONFIG,
  });
}

export function historySpec(data: HistoryData): VlSpec {
  const color = { field: 'series', type: 'nominal', title: 'study', scale: { domain: [...data.series] } };
  const panel = (field: string, title: string, name: string): Record<string, unknown> => ({
    width: 480,
    height: 180,
    layer: [
      {
        name,
        mark: { type: 'line', interpolate: 'step-after', point: true },
        encoding: {
          x: { field: 'trial', type: 'quantitative', title: 'trial number', axis: { tickMinStep: 1 } },
          y: { field, type: 'quantitative', title },
          color,
          tooltip: [
            { field: 'series', type: 'nominal' },
            { field: 'trial', type: 'quantitative' },
            { field: 'state', type: 'nominal' },
            { field: 'goodputPerGpu', type: 'quantitative', title: 'this trial goodput/GPU', format: '.0f' },
            { field: 'bestGoodputPerGpu', type: 'quantitative', title: 'best goodput/GPU', format: '.0f' },
            { field: 'hypervolume', type: 'quantitative', format: '.4~s' },
          ],
        },
      },
    ],
  });
  return asSpec({
    $schema: SCHEMA,
    title: { text: 'Optimization history', subtitle: `goodput = output tok/s per GPU of trials meeting the SLOs; hypervolume of the feasible front (reference ${data.reference.map((r) => r.toPrecision(4)).join(', ')})` },
    data: { values: data.rows.map((r) => ({ ...r })) },
    vconcat: [panel('bestGoodputPerGpu', 'best goodput (tok/s per GPU)', 'best_goodput'), panel('hypervolume', 'hypervolume', 'hypervolume')],
    config: CONFIG,
  });
}

export function importanceSpec(bars: readonly ImportanceBar[]): VlSpec {
  return asSpec({
    $schema: SCHEMA,
    title: { text: 'Knob importance', subtitle: 'rise in the surrogate’s MAPE when the knob is shuffled (permutation importance)' },
    width: 420,
    height: { step: 20 },
    data: { values: bars.map((b) => ({ knob: b.knob, importance: Math.max(0, b.importance) * 100, raw: b.importance * 100 })) },
    layer: [
      {
        name: 'bars',
        mark: { type: 'bar', color: '#4c78a8' },
        encoding: {
          y: { field: 'knob', type: 'nominal', sort: '-x', title: null },
          x: { field: 'importance', type: 'quantitative', title: 'MAPE increase (percentage points)' },
          tooltip: [{ field: 'knob', type: 'nominal' }, { field: 'raw', type: 'quantitative', title: 'MAPE increase (pp)', format: '.2f' }],
        },
      },
    ],
    config: CONFIG,
  });
}

export function partialDependenceSpec(rows: readonly PdRow[], knobs: readonly string[], target: string): VlSpec {
  const title = targetTitle(target);
  return asSpec({
    $schema: SCHEMA,
    title: { text: 'Partial dependence of the three most important knobs', subtitle: `mean predicted ${title} over the measured configurations with the knob set to each value; band: spread of the ensemble members` },
    // Each panel its own data: the knobs' value sets differ, so nothing is shared.
    hconcat: knobs.map((knob, i) => ({
      width: 200,
      height: 200,
      data: { values: rows.filter((r) => r.knob === knob).map((r) => ({ ...r })) },
      encoding: { x: { field: 'value', type: 'ordinal', sort: { field: 'order' }, title: knob } },
      layer: [
        { name: `pd_band_${i}`, mark: { type: 'area', opacity: 0.25, color: '#4c78a8' }, encoding: { y: { field: 'low', type: 'quantitative', title }, y2: { field: 'high' } } },
        {
          name: `pd_line_${i}`,
          mark: { type: 'line', point: true, color: '#4c78a8' },
          encoding: {
            y: { field: 'mean', type: 'quantitative', title },
            tooltip: [{ field: 'knob', type: 'nominal' }, { field: 'value', type: 'nominal' }, { field: 'mean', type: 'quantitative', format: '.0f' }, { field: 'low', type: 'quantitative', format: '.0f' }, { field: 'high', type: 'quantitative', format: '.0f' }],
          },
        },
      ],
    })),
    config: CONFIG,
  });
}

export function paritySpec(data: ParityData): VlSpec {
  const how = data.method === 'cross_validation' ? `${data.folds}-fold cross-validation (held-out predictions)` : 'the model’s own predictions on the rows it was trained on (too few runs to hold any out)';
  return asSpec({
    $schema: SCHEMA,
    title: { text: 'Predicted vs measured', subtitle: `${how}; line y = x, band ±MAPE; bars: ±2σ intervals` },
    hconcat: data.targets.map((target, i) => {
      const t = targetTitle(target);
      const e = data.mape[target];
      const axis = (title: string): Record<string, unknown> => ({ type: 'quantitative', title, scale: { type: 'log' } });
      return {
        width: 200,
        height: 200,
        title: `${t}${e === undefined ? '' : ` · MAPE ${(e * 100).toFixed(1)}%`}`,
        layer: [
          { name: `parity_band_${i}`, data: { values: data.bands.filter((b) => b.target === target) }, mark: { type: 'area', opacity: 0.18, color: '#e45756' }, encoding: { x: { field: 'x', ...axis(`measured`) }, y: { field: 'low', ...axis(`predicted`) }, y2: { field: 'high' } } },
          { name: `parity_diagonal_${i}`, data: { values: data.bands.filter((b) => b.target === target) }, mark: { type: 'line', color: '#e45756', strokeDash: [4, 3] }, encoding: { x: { field: 'x', ...axis('measured') }, y: { field: 'x', ...axis('predicted') } } },
          { name: `parity_interval_${i}`, data: { values: data.points.filter((p) => p.target === target).map((p) => ({ ...p })) }, mark: { type: 'rule', color: '#4c78a8', opacity: 0.35 }, encoding: { x: { field: 'measured', ...axis('measured') }, y: { field: 'low', ...axis('predicted') }, y2: { field: 'high' } } },
          {
            name: `parity_points_${i}`,
            data: { values: data.points.filter((p) => p.target === target).map((p) => ({ ...p })) },
            mark: { type: 'point', filled: true, color: '#4c78a8', size: 40 },
            encoding: {
              x: { field: 'measured', ...axis('measured') },
              y: { field: 'predicted', ...axis('predicted') },
              tooltip: [{ field: 'measured', type: 'quantitative', format: '.1f' }, { field: 'predicted', type: 'quantitative', format: '.1f' }, { field: 'low', type: 'quantitative', format: '.1f' }, { field: 'high', type: 'quantitative', format: '.1f' }],
            },
          },
        ],
      };
    }),
    config: CONFIG,
  });
}

/** SLO limits drawn on the CDFs: the limit (ms) and the quantile it applies to (0.99 for a p99 key). */
export type CdfSlo = Partial<Record<'TTFT' | 'ITL', { readonly key: string; readonly limitMs: number; readonly q: number }>>;

export function latencySpec(rows: readonly CdfRow[], note: string, slo: CdfSlo = {}): VlSpec {
  const candidates = [...new Set(rows.map((r) => r.candidate))];
  return asSpec({
    $schema: SCHEMA,
    title: { text: 'Latency distributions of the top candidates', subtitle: note },
    hconcat: (['TTFT', 'ITL'] as const).map((metric) => ({
      width: 300,
      height: 220,
      data: { values: rows.filter((r) => r.metric === metric).map((r) => ({ ...r })) },
      layer: [
        ...(slo[metric] === undefined
          ? []
          : [
              {
                // The SLO as the point the curve must pass above and to the left of.
                name: `slo_${metric.toLowerCase()}`,
                data: { values: [{ ms: slo[metric].limitMs, q: slo[metric].q, label: `SLO ${slo[metric].key} ≤ ${slo[metric].limitMs} ms` }] },
                mark: { type: 'rule', color: '#c0392b', strokeDash: [6, 4] },
                encoding: { x: { field: 'ms', type: 'quantitative', scale: { type: 'log' } }, y: { field: 'q', type: 'quantitative' }, y2: { datum: 0 }, tooltip: [{ field: 'label', type: 'nominal' }] },
              },
            ]),
        {
          name: `cdf_${metric.toLowerCase()}`,
          mark: { type: 'line', interpolate: 'step-after' },
          encoding: {
            x: { field: 'ms', type: 'quantitative', title: `${metric} (ms, log scale)`, scale: { type: 'log' } },
            y: { field: 'q', type: 'quantitative', title: 'fraction of requests ≤ x', scale: { domain: [0, 1] } },
            color: { field: 'candidate', type: 'nominal', title: 'candidate', scale: { domain: candidates }, legend: { labelLimit: 320 } },
            tooltip: [{ field: 'candidate', type: 'nominal' }, { field: 'ms', type: 'quantitative', format: '.1f' }, { field: 'q', type: 'quantitative', format: '.3f' }, { field: 'source', type: 'nominal' }],
          },
        },
      ],
    })),
    config: CONFIG,
  });
}
