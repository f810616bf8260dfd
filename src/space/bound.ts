import type { KnobValue, ServerConfig } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { contextVars, formatMessage, knobToCel, readsFor, type CelMap, type CelVars, type Compiled } from './cel.js';
import type { SpaceContext } from './context.js';
import { gridValues, type SymbolValue } from './knob.js';
import type { CompiledRule, SpaceDefinition } from './load.js';
import { MEMORY_FUNCTIONS, memoryFacts, memoryReads, type MemoryFacts, type MemoryFunctionName } from './memory.js';

/**
 * A space bound to one context (GPU, count, model, workload): symbols resolved, each knob's grid as
 * an option list, and one cache table per rule over the product of the knobs that rule reads, so a
 * rule is evaluated once per distinct combination of its own knobs however many points share it.
 *
 * Points are index vectors into the option lists. A conditional knob's option 0 is "inactive"
 * (`undefined`); its other options are its grid.
 */

const UNKNOWN = 0;
const PASS = 1;
const FAIL = 2;
const MAX_TABLE = 1 << 26;
/**
 * A table too large for an array is a Map used as a cache, and a cache may forget: past this many
 * entries it starts over. V8's Map refuses more than 2^24 entries ("Map maximum size exceeded"), which
 * a rule over a fine-grained knob (max_num_batched_tokens in steps of 8) reaches mid-prune.
 */
export const MAX_MAP_ENTRIES = 1 << 22;

/** Sets a cache entry, forgetting everything first when the Map is full (see MAX_MAP_ENTRIES). */
export function remember<V>(cache: Map<number, V>, key: number, value: V, limit = MAX_MAP_ENTRIES): void {
  if (cache.size >= limit && !cache.has(key)) cache.clear();
  cache.set(key, value);
}

export interface RuleTable {
  readonly rule: CompiledRule;
  /** Knob positions the rule reads, and their strides in the table. */
  readonly reads: readonly number[];
  readonly strides: readonly number[];
  readonly cells: Uint8Array | Map<number, number>;
}

/**
 * A memory built-in's values cached by grid cell over the knobs it reads: one number per cell and
 * field (NaN: not yet computed), not the facts object, which cost ~100 bytes per cell and most of a
 * prune's garbage collection when millions of cells are filled.
 */
interface MemTable {
  readonly reads: readonly number[];
  readonly strides: readonly number[];
  readonly size: number;
  readonly values: Map<keyof MemoryFacts, Float64Array | Map<number, number>>;
}

/** Dense value arrays up to this many cells (8 bytes each); a Map cache past it. */
const MAX_DENSE_CELLS = 1 << 25;

function pick(config: ServerConfig, keys: readonly string[]): ServerConfig {
  const sub: Record<string, unknown> = {};
  for (const r of keys) {
    const v = (config as Record<string, unknown>)[r];
    if (v !== undefined) sub[r] = v;
  }
  return sub;
}

/** A symbol's value in a context: a finite number or a list of them (ints of CEL as numbers). */
function symbolValue(name: string, expr: Compiled, vars: Omit<CelVars, 'config'>): SymbolValue {
  const fail = (what: string): never => {
    throw new LmBenchError('LMB_ERR_RULE_INVALID', `symbol ${name}: ${expr.source} ${what}; a symbol yields a number or a list of numbers`, { details: { symbol: name, expression: expr.source } });
  };
  let v: unknown;
  try {
    v = expr.run({ ...vars, config: {} });
  } catch (err) {
    return fail(`fails: ${err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err)}`);
  }
  const num = (x: unknown): number => {
    const n = typeof x === 'bigint' ? Number(x) : x;
    return typeof n === 'number' && Number.isFinite(n) ? n : fail(`yields ${JSON.stringify(x, (_k, y: unknown) => (typeof y === 'bigint' ? Number(y) : y))}`);
  };
  return Array.isArray(v) ? v.map(num) : num(v);
}

export interface Verdict {
  readonly ok: boolean;
  readonly rule?: string;
  readonly message?: string;
}

export class BoundSpace {
  readonly def: SpaceDefinition;
  readonly ctx: SpaceContext | undefined;
  readonly vars: Omit<CelVars, 'config'>;
  /** Symbol values: a number (`native`), or a list of numbers spliced into a grid (`replica_counts`). */
  readonly symbols: ReadonlyMap<string, SymbolValue>;
  /** Per knob, the values a point may take (conditional knobs: `undefined` first). */
  readonly options: readonly (readonly (KnobValue | undefined)[])[];
  readonly conditional: readonly boolean[];
  readonly tables: readonly RuleTable[];
  /** CEL evaluations of rules so far (the cost the tables keep small). */
  evaluations = 0;
  readonly #index: readonly Map<KnobValue | undefined, number>[];
  readonly #memo = new Map<string, MemoryFacts>();
  readonly #memTables = new Map<string, MemTable>();
  readonly #memByFn = new Map<MemoryFunctionName, MemTable>();
  /** One variables object reused across evaluations (only `config` changes). */
  readonly #evalVars: CelVars;
  /** The grid point being evaluated, when there is one (lets memory built-ins cache by index). */
  #point: readonly number[] | null = null;
  readonly #whenMemo: Map<string, boolean>[];

  /** Without a context (enumeration of the bare space) symbols stay unresolved and drop out of grids. */
  constructor(def: SpaceDefinition, ctx: SpaceContext | undefined) {
    this.def = def;
    this.ctx = ctx;
    this.vars = ctx === undefined ? { model: {}, hardware: {}, workload: {} } : contextVars(ctx);
    this.#evalVars = { ...this.vars, config: {} };
    const symbols = new Map<string, SymbolValue>();
    for (const [name, expr] of ctx === undefined ? [] : def.symbols) symbols.set(name, symbolValue(name, expr, this.vars));
    this.symbols = symbols;
    this.conditional = def.knobs.map((k) => k.when !== undefined);
    this.options = def.knobs.map((k, i) => {
      const grid = gridValues(k.knob, symbols);
      return this.conditional[i] === true ? [undefined, ...grid] : grid;
    });
    if (ctx !== undefined) {
      for (const [i, k] of def.knobs.entries()) {
        if ((this.options[i]?.length ?? 0) > (this.conditional[i] === true ? 1 : 0)) continue;
        const syms = k.knob.type === 'int' || k.knob.type === 'float' ? k.knob.grid.flatMap((g) => (typeof g === 'number' ? [] : [g.symbol])) : [];
        throw new LmBenchError('LMB_ERR_SPACE_INVALID', `${k.file}${k.line === null ? '' : `:${k.line}`}: knobs.${k.knob.name}.grid: no value in this context (${syms.map((x) => `symbol ${x} yields ${JSON.stringify(symbols.get(x))}`).join(', ')}): every configuration would lack the knob`, {
          details: { file: k.file, line: k.line, field: `knobs.${k.knob.name}.grid` },
        });
      }
    }
    this.#index = this.options.map((opts) => new Map(opts.map((v, i) => [v, i])));
    this.#whenMemo = def.knobs.map(() => new Map<string, boolean>());
    const position = new Map(def.knobs.map((k, i) => [k.knob.name, i]));
    this.tables = def.rules.map((rule) => {
      // Over the knobs the rule reads in this context: a dense model's memory ignores DP and EP.
      const reads = (ctx === undefined ? rule.compiled.reads : readsFor(rule.compiled, ctx.model)).map((r) => position.get(r) ?? -1);
      const strides: number[] = [];
      let size = 1;
      for (const p of reads) {
        strides.push(size);
        size *= this.options[p]?.length ?? 1;
      }
      return { rule, reads, strides, cells: size <= MAX_TABLE ? new Uint8Array(size) : new Map<number, number>() };
    });
  }

  readonly #lookup = (fn: MemoryFunctionName, config: () => ServerConfig): number => this.#memoryValue(fn, config);

  #memoryValue(fn: MemoryFunctionName, config: () => ServerConfig): number {
    const field = MEMORY_FUNCTIONS[fn].field;
    // On the grid the facts are cached by the point's indices over the knobs the built-in reads.
    const point = this.#point;
    if (point !== null) {
      const t = this.#memTable(fn);
      let cell = 0;
      for (let i = 0; i < t.reads.length; i++) cell += (point[t.reads[i] ?? 0] ?? 0) * (t.strides[i] ?? 0);
      let values = t.values.get(field);
      if (values === undefined) {
        values = t.size <= MAX_DENSE_CELLS ? new Float64Array(t.size).fill(Number.NaN) : new Map<number, number>();
        t.values.set(field, values);
      }
      const known = values instanceof Map ? values.get(cell) : values[cell];
      if (known !== undefined && !Number.isNaN(known)) return known;
      const facts = memoryFacts(pick(config(), memoryReads(fn, this.#context().model)), this.#context());
      // Every field this table caches gets the cell: built-ins reading the same knobs share it.
      for (const [f, v] of t.values) {
        if (v instanceof Map) remember(v, cell, facts[f]);
        else v[cell] = facts[f];
      }
      return facts[field];
    }
    return this.#factsFor(fn, config())[field];
  }

  #memTable(fn: MemoryFunctionName): MemTable {
    let t = this.#memByFn.get(fn);
    if (t !== undefined) return t;
    // Built-ins reading the same knobs share one table of facts.
    const reads = memoryReads(fn, this.#context().model);
    const sig = reads.join(',');
    t = this.#memTables.get(sig);
    if (t === undefined) {
      const names = this.def.knobs.map((k) => k.knob.name);
      const pos = reads.map((r) => names.indexOf(r)).filter((p) => p >= 0);
      const strides: number[] = [];
      let size = 1;
      for (const p of pos) {
        strides.push(size);
        size *= this.options[p]?.length ?? 1;
      }
      t = { reads: pos, strides, size, values: new Map() };
      this.#memTables.set(sig, t);
    }
    this.#memByFn.set(fn, t);
    return t;
  }

  /** The simulator's facts for the knobs a built-in reads (the others defaulted: its value ignores them). */
  #factsFor(fn: MemoryFunctionName, config: ServerConfig): MemoryFacts {
    const reads = memoryReads(fn, this.#context().model);
    const sub = pick(config, reads);
    const key = `${reads.join(',')}|${reads.map((r) => String((sub as Record<string, unknown>)[r])).join('|')}`;
    let facts = this.#memo.get(key);
    if (facts === undefined) {
      facts = memoryFacts(sub, this.#context());
      if (this.#memo.size > 200_000) this.#memo.clear();
      this.#memo.set(key, facts);
    }
    return facts;
  }

  /** The CEL config map of a point, restricted to the given knob positions. */
  celConfig(point: readonly number[], positions: readonly number[]): CelMap {
    const m: CelMap = {};
    for (const p of positions) {
      const v = this.options[p]?.[point[p] ?? -1];
      const k = this.def.knobs[p];
      if (v !== undefined && k !== undefined) m[k.knob.name] = knobToCel(v, k.isInt);
    }
    return m;
  }

  /** Whether a conditional knob is active given the earlier knobs of a point. */
  isActive(knob: number, point: readonly number[]): boolean {
    const k = this.def.knobs[knob];
    if (k?.when === undefined) return true;
    const positions = k.when.reads.map((r) => this.def.knobs.findIndex((x) => x.knob.name === r));
    const key = positions.map((p) => point[p]).join(',');
    const memo = this.#whenMemo[knob];
    const hit = memo?.get(key);
    if (hit !== undefined) return hit;
    const at = `${k.file}${k.line === null ? '' : `:${k.line}`}: knobs.${k.knob.name}.when`;
    let v: unknown;
    try {
      v = k.when.run({ ...this.vars, config: this.celConfig(point, positions) });
    } catch (err) {
      // A CEL error here was an uncaught LMB_ERR_INTERNAL (exit 70) naming neither file nor knob.
      const msg = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
      throw new LmBenchError('LMB_ERR_RULE_INVALID', `${at}: ${msg} (at ${JSON.stringify(this.configOf(point.slice(0, knob)))})`, {
        cause: err,
        details: { file: k.file, line: k.line, field: `knobs.${k.knob.name}.when` },
      });
    }
    if (typeof v !== 'boolean') throw new LmBenchError('LMB_ERR_RULE_INVALID', `${at} does not yield a bool`, { details: { file: k.file, line: k.line, field: `knobs.${k.knob.name}.when` } });
    memo?.set(key, v);
    return v;
  }

  /** Evaluates one rule at a point (cached over the knobs it reads). */
  passes(t: RuleTable, point: readonly number[]): boolean {
    let cell = 0;
    for (let i = 0; i < t.reads.length; i++) cell += (point[t.reads[i] ?? 0] ?? 0) * (t.strides[i] ?? 0);
    const cells = t.cells;
    const known = cells instanceof Uint8Array ? (cells[cell] ?? UNKNOWN) : (cells.get(cell) ?? UNKNOWN);
    if (known !== UNKNOWN) return known === PASS;
    this.#point = point;
    let ok: boolean;
    try {
      ok = this.evaluate(t.rule, this.celConfig(point, t.reads));
    } finally {
      this.#point = null;
    }
    if (cells instanceof Uint8Array) cells[cell] = ok ? PASS : FAIL;
    else remember(cells, cell, ok ? PASS : FAIL);
    return ok;
  }

  evaluate(rule: CompiledRule, config: CelMap): boolean {
    this.evaluations++;
    // The engine is shared by every context of this space: point its memory built-ins at ours.
    this.def.engine.setMemory(this.#lookup);
    let v: unknown;
    try {
      this.#evalVars.config = config;
      v = rule.compiled.run(this.#evalVars);
    } catch (err) {
      const msg = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
      throw new LmBenchError('LMB_ERR_RULE_INVALID', `${rule.file}${rule.line === null ? '' : `:${rule.line}`}: rule ${rule.id}: ${msg} (guard conditional knobs with has(config.x))`, {
        cause: err,
        details: { rule: rule.id, file: rule.file, line: rule.line },
      });
    }
    if (typeof v !== 'boolean') {
      throw new LmBenchError('LMB_ERR_RULE_INVALID', `${rule.file}:${rule.line ?? ''}: rule ${rule.id} yields ${typeof v}, not a bool`, { details: { rule: rule.id } });
    }
    return v;
  }

  /** Index vector of a config, or null when a value is off the grid (or activity does not match). */
  pointOf(config: ServerConfig): number[] | null {
    const point: number[] = [];
    const c = config as Record<string, KnobValue | undefined>;
    for (let k = 0; k < this.options.length; k++) {
      const name = this.def.knobs[k]?.knob.name ?? '';
      const active = this.isActive(k, point);
      const v = active ? c[name] : undefined;
      if (active && v === undefined) return null;
      const i = this.#index[k]?.get(v);
      if (i === undefined) return null;
      point.push(i);
    }
    return point;
  }

  configOf(point: readonly number[]): ServerConfig {
    const out: Record<string, KnobValue> = {};
    for (let k = 0; k < point.length; k++) {
      const v = this.options[k]?.[point[k] ?? -1];
      const name = this.def.knobs[k]?.knob.name;
      if (v !== undefined && name !== undefined) out[name] = v;
    }
    return out;
  }

  /** The first rule a point breaks, in file order. */
  checkPoint(point: readonly number[]): Verdict {
    for (const t of this.tables) {
      if (!this.passes(t, point)) return { ok: false, rule: t.rule.id, message: this.message(t.rule, this.configOf(point)) };
    }
    return { ok: true };
  }

  /** The first rule a config (on or off the grid) breaks. */
  checkConfig(config: ServerConfig): Verdict {
    const point = this.pointOf(config);
    if (point !== null) return this.checkPoint(point);
    const m: CelMap = {};
    for (const k of this.def.knobs) {
      const v = (config as Record<string, KnobValue | undefined>)[k.knob.name];
      if (v !== undefined) m[k.knob.name] = knobToCel(v, k.isInt);
    }
    for (const t of this.tables) {
      if (!this.evaluate(t.rule, m)) return { ok: false, rule: t.rule.id, message: this.message(t.rule, config) };
    }
    return { ok: true };
  }

  message(rule: CompiledRule, config: ServerConfig): string {
    const m: CelMap = {};
    for (const k of this.def.knobs) {
      const v = (config as Record<string, KnobValue | undefined>)[k.knob.name];
      if (v !== undefined) m[k.knob.name] = v;
    }
    let facts: MemoryFacts | undefined;
    return formatMessage(rule.message, { ...this.vars, config: m }, () => (facts ??= memoryFacts(config, this.#context())));
  }

  #context(): SpaceContext {
    if (this.ctx === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', 'rules need a context (hardware, model, workload)');
    return this.ctx;
  }
}
