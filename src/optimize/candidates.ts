import type { ServerConfig } from '../domain/index.js';
import { contextFeatures, encodeKnobs, type FeatureContext, type KnobEncoder } from '../surrogate/features.js';
import { predictSurrogate, type Surrogate } from '../surrogate/surrogate.js';
import type { TargetName } from '../surrogate/targets.js';
import type { CandidatePredictions } from './acquisition.js';
import { merit, type Constraint, type PickRule } from './objectives.js';
import { configKey } from './sampler.js';

/**
 * Turns candidate configurations into surrogate predictions, in two stages. The physics stage
 * (simulator memory and roofline model, ~10 µs a configuration) prices every candidate and keeps the
 * `keep` most promising: highest ideal throughput (or, for a rule that minimises energy, fewest ideal
 * joules per token) among those whose ideal latencies leave the SLOs room, configurations with no KV
 * capacity dropped. The learned stage then scores the survivors with
 * the full ensemble through the typed-array tree evaluator. `always` candidates (local mutations around
 * the front) skip the physics cut.
 */
export interface ScoredCandidates {
  readonly configs: ServerConfig[];
  readonly predictions: CandidatePredictions;
  /** Encoded knob vectors, configs.length × dims. */
  readonly encoded: Float32Array;
  readonly dims: number;
  /** How many candidates the physics stage priced. */
  readonly screened: number;
}

export interface ScoreOptions {
  readonly surrogate: Surrogate;
  readonly context: FeatureContext;
  readonly encoder: KnobEncoder;
  readonly constraints: readonly Constraint[];
  readonly targets: readonly TargetName[];
  readonly keep: number;
  /** configKeys on `context` (`configKey(config, context)`) never to return (trials already run or pending); checked only on the pool's survivors. */
  readonly exclude?: ReadonlySet<string>;
  /** What the physics stage ranks by (default: ideal throughput per GPU). */
  readonly rule?: PickRule;
}

const KV_CAPACITY_COL = 'phys_log_kv_token_capacity';

export function scoreCandidates(pool: readonly ServerConfig[], always: readonly ServerConfig[], opts: ScoreOptions): ScoredCandidates {
  const all = [...always, ...pool];
  const ctxRows = all.map((c) => contextFeatures(c, opts.context));
  const physics = new Float64Array(all.length);
  ctxRows.forEach((f, i) => {
    let slack = 1;
    for (const c of opts.constraints) {
      const b = f.baselines[c.target];
      // Ideal latencies are optimistic: one already past the limit will not meet it in practice.
      if (b > c.limitMs) slack *= 0.01;
    }
    const ideal = opts.rule === undefined ? f.baselines.output_throughput_per_gpu : merit(f.baselines, opts.rule);
    physics[i] = i < always.length ? Number.POSITIVE_INFINITY : ideal * slack;
  });
  const order = [...all.keys()].sort((a, b) => (physics[b] ?? 0) - (physics[a] ?? 0));
  const capCol = opts.surrogate.featureNames.indexOf(KV_CAPACITY_COL);
  const want = Math.max(opts.keep, always.length);
  const kept: number[] = [];
  // Two survivors of the pool can be one configuration written two ways (a CUDA-graph capture size past
  // max_num_batched_tokens is capped to it): one of them is kept, or a batch could measure it twice.
  // `always` comes first in `order` (its score is infinite), and every one of it is kept.
  const keptKeys = new Set<string>();
  for (const i of order) {
    if (kept.length >= want) break;
    const key = configKey(all[i] as ServerConfig, opts.context);
    if (i >= always.length && (opts.exclude?.has(key) === true || keptKeys.has(key))) continue;
    keptKeys.add(key);
    kept.push(i);
  }
  const configs = kept.map((i) => all[i] as ServerConfig);
  const encRows = configs.map((c) => encodeKnobs(c, opts.context, opts.encoder));
  const dims = encRows[0]?.length ?? 0;
  const cols = opts.surrogate.featureNames.length;
  const data = new Float32Array(configs.length * cols);
  const encoded = new Float32Array(configs.length * dims);
  const baselines: Partial<Record<TargetName, Float64Array>> = {};
  for (const t of opts.targets) baselines[t] = new Float64Array(configs.length);
  kept.forEach((src, i) => {
    const enc = encRows[i] ?? [];
    encoded.set(enc, i * dims);
    data.set(enc, i * cols);
    const f = ctxRows[src];
    if (f === undefined) return;
    data.set(f.row, i * cols + enc.length);
    for (const t of opts.targets) {
      const arr = baselines[t];
      if (arr !== undefined) arr[i] = f.baselines[t];
    }
  });
  const p = predictSurrogate(opts.surrogate, { rows: configs.length, cols, data }, baselines, opts.targets);
  if (capCol >= 0) {
    // No KV block at all: vLLM refuses to start whatever the classifier thinks.
    for (let i = 0; i < configs.length; i++) if ((data[i * cols + capCol] ?? 0) <= Math.log(1.5)) p.pStart[i] = 0;
  }
  return { configs, predictions: p, encoded, dims, screened: all.length };
}
