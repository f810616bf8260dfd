import type { KnobValue, ServerConfig } from '../domain/index.js';
import { maxRequestTokens } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { createRng, type Rng } from '../util/rng.js';
import { BoundSpace, type Verdict } from './bound.js';
import { knobToCel, type CelMap, type CelVars, type Compiled } from './cel.js';
import type { SpaceContext } from './context.js';
import { Encoder } from './encode.js';
import { canonical, contains, type Knob } from './knob.js';
import { loadSpaceDefinition, type CompiledKnob, type SpaceDefinition } from './load.js';
import { feasiblePoints, pruneCountsOrEstimate, spaceSize, type Costliest, type RuleRemoval } from './prune.js';
import { neighbour, neighbours, sampleFeasible } from './sample.js';
import type { RuleKind } from './schema.js';

export interface RuleInfo {
  readonly id: string;
  readonly kind: RuleKind;
  readonly require: string;
  readonly message: string;
  readonly source: string;
  /** Knobs the rule reads (memory built-ins read what the simulator's formula reads). */
  readonly reads: readonly string[];
  readonly file: string;
  readonly line: number | null;
}

export interface PruneReport {
  readonly space: string;
  readonly files: readonly string[];
  readonly context: { readonly gpu: string; readonly gpus: number; readonly model: string; readonly workload: string; readonly max_request_tokens: number };
  /** How removals are counted: each removed point counts for the first rule (file order) it breaks. */
  readonly attribution: 'first-match';
  readonly points_before: number;
  readonly points_after: number;
  readonly rules: readonly (RuleRemoval & { readonly message: string })[];
  readonly evaluations: number;
  /**
   * `exact`: every point counted; `estimate`: removals from `samples` uniform draws over the grid,
   * where counting point by point would not end (`costliest` names the rule and knobs why).
   */
  readonly method: 'exact' | 'estimate';
  readonly samples: number | null;
  readonly costliest: Costliest | null;
}

export type { SpaceContext, Verdict };

/** Loads one file or several (merged in order, each after what it `extends`). */
export function loadSpace(paths: string | readonly string[]): SearchSpace {
  return new SearchSpace(loadSpaceDefinition(paths));
}

const ctxKey = (c: SpaceContext): string => `${c.hardware.id}|${c.gpuCount}|${c.model.id}|${JSON.stringify(c.workload)}`;

export class SearchSpace {
  readonly name: string;
  readonly files: readonly string[];
  readonly knobs: readonly Knob[];
  readonly rules: readonly RuleInfo[];
  readonly #def: SpaceDefinition;
  readonly #encoder: Encoder;
  readonly #bound = new Map<string, BoundSpace>();
  #bare: BoundSpace | undefined;
  readonly #defaults = new WeakMap<BoundSpace, ServerConfig>();
  readonly #defaultOrder: readonly CompiledKnob[];

  constructor(def: SpaceDefinition) {
    this.#def = def;
    this.name = def.name;
    this.files = def.files;
    this.knobs = def.knobs.map((k) => k.knob);
    this.rules = def.rules.map((r) => ({
      id: r.id,
      kind: r.kind,
      require: r.require,
      message: r.message,
      source: r.source,
      reads: r.compiled.reads,
      file: r.file,
      line: r.line,
    }));
    this.#encoder = new Encoder(this.knobs);
    this.#defaultOrder = defaultOrder(def);
  }

  /**
   * The knob values that keep the checkpoint's numerics (each `keeps_precision` knob at its first
   * such value): what `--keep-precision` pins.
   */
  precisionPins(): ServerConfig {
    const out: Record<string, KnobValue> = {};
    for (const k of this.knobs) if (k.keepsPrecision !== undefined) out[k.name] = k.keepsPrecision[0] as KnobValue;
    return out;
  }

  /**
   * `knob=value` for each knob of a config whose value changes the model's numerics (fp8 weights, an
   * fp8 KV cache); unset knobs take vLLM's defaults, which keep them.
   */
  numericsChanges(config: ServerConfig): string[] {
    const c = config as Record<string, KnobValue | undefined>;
    const out: string[] = [];
    for (const k of this.knobs) {
      const v = c[k.name];
      if (k.keepsPrecision === undefined || v === undefined) continue;
      const same = k.keepsPrecision.some((keep) => keep === v || (k.type === 'categorical' && typeof v === 'string' && canonical(k, v) === keep));
      if (!same) out.push(`${k.name}=${String(v)}`);
    }
    return out;
  }

  /** The space bound to a context (cached: the rule tables live here). */
  bind(ctx: SpaceContext): BoundSpace {
    const key = ctxKey(ctx);
    let b = this.#bound.get(key);
    if (b === undefined) {
      if (this.#bound.size >= 4) this.#bound.delete(this.#bound.keys().next().value ?? '');
      b = new BoundSpace(this.#def, ctx);
      this.#bound.set(key, b);
    }
    return b;
  }

  #boundOrBare(ctx: SpaceContext | undefined): BoundSpace {
    if (ctx !== undefined) return this.bind(ctx);
    this.#bare ??= new BoundSpace(this.#def, undefined);
    return this.#bare;
  }

  /** vLLM's defaults for every knob of the space in this context (docs/references/vllm-engine.md#default-resolution); inactive knobs left out. */
  defaultsFor(ctx: SpaceContext): ServerConfig {
    const b = this.bind(ctx);
    const cached = this.#defaults.get(b);
    if (cached !== undefined) return { ...cached };
    const values = new Map<string, KnobValue>();
    for (const ck of this.#defaultOrder) {
      const k = ck.knob;
      const d = ck.default;
      if (d === undefined) {
        throw new LmBenchError('LMB_ERR_SPACE_INVALID', `${ck.line === null ? ck.file : `${ck.file}:${ck.line}`}: knobs.${k.name}.default: the knob has no default (vLLM's value when the flag is not given)`, {
          details: { file: ck.file, line: ck.line, field: `knobs.${k.name}.default` },
        });
      }
      let v: KnobValue;
      if ('value' in d) {
        v = typeof d.value === 'string' && k.type !== 'categorical' ? scalarSymbol(b, d.value, ck) : d.value;
      } else {
        v = runDefault(ck, d.expr, { ...b.vars, config: this.#celOf(values) });
      }
      values.set(k.name, v);
    }
    const defaults = this.#withActivity(Object.fromEntries(values), b);
    this.#defaults.set(b, defaults);
    return { ...defaults };
  }

  #celOf(values: ReadonlyMap<string, KnobValue>): CelMap {
    const m: CelMap = {};
    for (const ck of this.#def.knobs) {
      const v = values.get(ck.knob.name);
      if (v !== undefined) m[ck.knob.name] = knobToCel(v, ck.isInt);
    }
    return m;
  }

  /** Drops knobs whose condition does not hold; knobs outside the space are kept untouched. */
  #withActivity(config: ServerConfig, b: BoundSpace): ServerConfig {
    const out: Record<string, KnobValue> = { ...(config as Record<string, KnobValue>) };
    for (const ck of this.#def.knobs) {
      if (ck.when === undefined) continue;
      if (!runWhen(ck, ck.when, { ...b.vars, config: this.#celOf(new Map(Object.entries(out))) })) delete out[ck.knob.name];
    }
    return out;
  }

  /** A config with unset knobs at their defaults and inactive conditional knobs dropped. */
  complete(config: ServerConfig, ctx: SpaceContext): ServerConfig {
    const merged: Record<string, KnobValue> = { ...(this.defaultsFor(ctx) as Record<string, KnobValue>) };
    for (const [k, v] of Object.entries(config) as [string, KnobValue | undefined][]) if (v !== undefined) merged[k] = v;
    // A conditional knob activated by the user's parents but not set gets its default for that config.
    const b = this.bind(ctx);
    const withAct = this.#withActivity(merged, b) as Record<string, KnobValue>;
    for (const ck of this.#def.knobs) {
      if (ck.when === undefined || withAct[ck.knob.name] !== undefined) continue;
      const active = runWhen(ck, ck.when, { ...b.vars, config: this.#celOf(new Map(Object.entries(withAct))) });
      if (active && ck.default !== undefined) {
        const d = ck.default;
        // A literal naming a symbol (`default: native`) is its number here too, as in defaultsFor.
        withAct[ck.knob.name] =
          'value' in d ? (typeof d.value === 'string' && ck.knob.type !== 'categorical' ? scalarSymbol(b, d.value, ck) : d.value) : runDefault(ck, d.expr, { ...b.vars, config: this.#celOf(new Map(Object.entries(withAct))) });
      }
    }
    return withAct;
  }

  featureNames(): string[] {
    return this.#encoder.featureNames();
  }

  encode(config: ServerConfig): Float64Array {
    return this.#encoder.encode(config);
  }

  /** Vector → config; with a context, numeric values snap to the (symbol-resolved) grid and activity applies. */
  decode(vector: ArrayLike<number>, ctx?: SpaceContext): ServerConfig {
    if (ctx === undefined) return this.#encoder.decode(vector);
    const b = this.bind(ctx);
    const snapped = this.#encoder.decode(vector, (k, v) => nearestOnGrid(b, k, v));
    return this.#withActivity(snapped, b);
  }

  /** Whether every knob value lies in its domain (symbols such as `native` resolved with the context). */
  contains(config: ServerConfig, ctx?: SpaceContext): boolean {
    const b = ctx === undefined ? undefined : this.bind(ctx);
    return this.#encoder.contains(config, (i) => symbolValues(b, this.knobs[i]));
  }

  /** Points of the discretised space (conditional knobs only where active); symbols need a context. */
  size(ctx?: SpaceContext): number {
    return spaceSize(this.#boundOrBare(ctx));
  }

  /** Every point of the discretised space in a fixed order (knobs in file order, last fastest). */
  *enumerate(ctx?: SpaceContext): Generator<ServerConfig> {
    const b = this.#boundOrBare(ctx);
    const n = b.options.length;
    const point = new Array<number>(n).fill(0);
    function* rec(k: number): Generator<ServerConfig> {
      if (k === n) {
        yield b.configOf(point);
        return;
      }
      const size = b.options[k]?.length ?? 1;
      const [lo, hi] = b.conditional[k] === true ? (b.isActive(k, point) ? [1, size] : [0, 1]) : [0, size];
      for (let o = lo; o < hi; o++) {
        point[k] = o;
        yield* rec(k + 1);
      }
      point[k] = 0;
    }
    yield* rec(0);
  }

  /** Every feasible point in enumeration order; infeasible subtrees are skipped, not visited. */
  *enumerateFeasible(ctx: SpaceContext): Generator<ServerConfig> {
    const b = this.bind(ctx);
    for (const p of feasiblePoints(b)) yield b.configOf(p);
  }

  /** Whether a config starts and serves the workload per the rules; the first broken rule otherwise. */
  isFeasible(config: ServerConfig, ctx: SpaceContext): Verdict {
    const full = this.complete(config, ctx);
    const b = this.bind(ctx);
    for (const [i, k] of this.knobs.entries()) {
      const v = (full as Record<string, unknown>)[k.name];
      if (v !== undefined && !contains(k, v, symbolValues(b, this.knobs[i]))) {
        return { ok: false, rule: 'domain', message: `${k.name} = ${JSON.stringify(v)} is outside the space's domain` };
      }
    }
    return b.checkConfig(full);
  }

  /** Feasibility of many configs at once (≥ 100k is fine: rules are table lookups after the first few). */
  feasibleMask(configs: readonly ServerConfig[], ctx: SpaceContext): Uint8Array {
    const b = this.bind(ctx);
    const out = new Uint8Array(configs.length);
    configs.forEach((c, i) => {
      const point = b.pointOf(c);
      out[i] = (point === null ? this.isFeasible(c, ctx).ok : b.checkPoint(point).ok) ? 1 : 0;
    });
    return out;
  }

  /** n distinct feasible configs, space-filling (Latin hypercube over the grid), deterministic per rng. */
  sample(n: number, rng: Rng, ctx: SpaceContext): ServerConfig[] {
    const b = this.bind(ctx);
    const { points } = sampleFeasible(b, n, rng);
    if (points.length === 0 && n > 0) {
      throw new LmBenchError('LMB_ERR_SPACE_EMPTY', `no feasible configuration of ${this.name} found for ${ctx.model.id} on ${ctx.gpuCount}× ${ctx.hardware.id}`);
    }
    return points.map((p) => b.configOf(p));
  }

  /** A feasible neighbour of a config (one or two knobs one grid step away); the config itself if none is found. */
  mutate(config: ServerConfig, rng: Rng, ctx: SpaceContext): ServerConfig {
    const b = this.bind(ctx);
    const from = b.pointOf(this.complete(config, ctx)) ?? b.pointOf(this.decode(this.encode(this.complete(config, ctx)), ctx));
    if (from === null) return config;
    const defaults = b.pointOf(this.defaultsFor(ctx)) ?? [];
    const next = neighbour(b, from, rng, defaults);
    return next === null ? config : b.configOf(next);
  }

  /** Every feasible configuration one knob one grid step from `config` (sample.ts `neighbours`); none when it is off the grid. */
  neighbours(config: ServerConfig, ctx: SpaceContext): ServerConfig[] {
    const b = this.bind(ctx);
    const from = b.pointOf(this.complete(config, ctx));
    if (from === null) return [];
    return neighbours(b, from, b.pointOf(this.defaultsFor(ctx)) ?? []).map((p) => b.configOf(p));
  }

  /** What the rules remove from the discretised space in this context. */
  prune(ctx: SpaceContext): PruneReport {
    const b = this.bind(ctx);
    // A fixed seed: the same file and context give the same estimate.
    const counts = pruneCountsOrEstimate(b, createRng(0x5eed).fork('prune'));
    return {
      space: this.name,
      files: this.files,
      context: { gpu: ctx.hardware.id, gpus: ctx.gpuCount, model: ctx.model.id, workload: ctx.workload.name, max_request_tokens: maxRequestTokens(ctx.workload) },
      attribution: 'first-match',
      points_before: counts.pointsBefore,
      points_after: counts.pointsAfter,
      rules: counts.rules.map((r, i) => ({ ...r, message: this.rules[i]?.message ?? '' })),
      evaluations: counts.evaluations,
      method: counts.method,
      samples: counts.samples,
      costliest: counts.costliest,
    };
  }
}

function symbolValues(b: BoundSpace | undefined, knob: Knob | undefined): number[] {
  if (b === undefined || knob === undefined || (knob.type !== 'int' && knob.type !== 'float')) return [];
  return knob.grid.flatMap((g) => (typeof g === 'number' ? [] : [b.symbols.get(g.symbol) ?? Number.NaN].flat()));
}

/**
 * A default expression's value, of the knob's type (it may lie outside the tuning domain: vLLM's own
 * max_num_batched_tokens default follows max_model_len). A CEL error or a value of another type names
 * the knob and its line, where it was an uncaught error or a config vLLM cannot take.
 */
function runDefault(ck: CompiledKnob, expr: Compiled, vars: CelVars): KnobValue {
  const k = ck.knob;
  const field = `knobs.${k.name}.default`;
  const at = `${ck.line === null ? ck.file : `${ck.file}:${ck.line}`}: ${field}`;
  let out: unknown;
  try {
    out = expr.run(vars);
  } catch (err) {
    const msg = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
    throw new LmBenchError('LMB_ERR_RULE_INVALID', `${at}: ${msg}`, { cause: err, details: { file: ck.file, line: ck.line, field } });
  }
  const v = typeof out === 'bigint' ? Number(out) : out;
  const ok =
    k.type === 'bool' ? typeof v === 'boolean'
    : k.type === 'categorical' ? typeof v === 'string' && contains(k, v)
    : typeof v === 'number' && Number.isFinite(v) && (k.type === 'float' || Number.isInteger(v));
  if (!ok) {
    const want = k.type === 'categorical' ? `one of ${k.values.join(', ')}` : k.type === 'int' ? 'an integer' : k.type === 'float' ? 'a number' : 'a bool';
    throw new LmBenchError('LMB_ERR_RULE_INVALID', `${at}: ${expr.source} yields ${JSON.stringify(v)}, not ${want}`, { details: { file: ck.file, line: ck.line, field } });
  }
  return v as KnobValue;
}

/** Whether a knob's condition holds for a config; a CEL error names the knob and its line. */
function runWhen(ck: CompiledKnob, when: Compiled, vars: CelVars): boolean {
  const field = `knobs.${ck.knob.name}.when`;
  try {
    return when.run(vars) === true;
  } catch (err) {
    const msg = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
    throw new LmBenchError('LMB_ERR_RULE_INVALID', `${ck.line === null ? ck.file : `${ck.file}:${ck.line}`}: ${field}: ${msg}`, { cause: err, details: { file: ck.file, line: ck.line, field } });
  }
}

/** A default naming a symbol takes its one number; a symbol yielding a list cannot be a default. */
function scalarSymbol(b: BoundSpace, name: string, ck: CompiledKnob): number {
  const v = b.symbols.get(name);
  if (typeof v === 'number') return v;
  const at = ck.line === null ? ck.file : `${ck.file}:${ck.line}`;
  throw new LmBenchError('LMB_ERR_SPACE_INVALID', `${at}: knobs.${ck.knob.name}.default: symbol ${name} yields ${v === undefined ? 'nothing' : `a list (${v.join(', ')})`}, not one number`, {
    details: { file: ck.file, line: ck.line, field: `knobs.${ck.knob.name}.default` },
  });
}

function nearestOnGrid(b: BoundSpace, k: number, v: number): number {
  const knob = b.def.knobs[k]?.knob;
  const opts = (b.options[k] ?? []).filter((o): o is number => typeof o === 'number');
  if (knob === undefined || opts.length === 0 || (knob.type !== 'int' && knob.type !== 'float')) return v;
  const t = (x: number): number => (knob.log ? Math.log2(x) : x);
  let best = opts[0] ?? v;
  for (const o of opts) if (Math.abs(t(o) - t(v)) < Math.abs(t(best) - t(v))) best = o;
  return best;
}

/** Knobs ordered so each default is computed after the knobs its expression reads. */
function defaultOrder(def: SpaceDefinition): CompiledKnob[] {
  const done = new Set<string>();
  const order: CompiledKnob[] = [];
  const pending = [...def.knobs];
  while (pending.length > 0) {
    const i = pending.findIndex((ck) => {
      const d = ck.default;
      const reads = d !== undefined && 'expr' in d ? d.expr.reads : [];
      return reads.every((r) => r === ck.knob.name || done.has(r));
    });
    if (i < 0) {
      const names = pending.map((p) => p.knob.name).join(', ');
      throw new LmBenchError('LMB_ERR_SPACE_INVALID', `${pending[0]?.file ?? ''}: the defaults of ${names} depend on each other in a cycle`);
    }
    const [ck] = pending.splice(i, 1);
    if (ck === undefined) break;
    done.add(ck.knob.name);
    order.push(ck);
  }
  return order;
}
