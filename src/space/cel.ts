import { Environment, ParseError } from '@marcbachmann/cel-js';
import type { KnobValue, ServerConfig } from '../domain/index.js';
import { Hardware, ModelSpec, checkpointQuantMethod, maxLength, maxRequestTokens, quantGroupColumns } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { SpaceContext } from './context.js';
import { MEMORY_FUNCTIONS, memoryReads, type MemoryFacts, type MemoryFunctionName } from './memory.js';

/**
 * The safe expression engine for rules, defaults, activation conditions and symbols: CEL
 * (@marcbachmann/cel-js 8), side-effect free and non-Turing-complete. Variables are maps:
 * `config` (the knobs), `model` (data/models.yaml, plus `is_moe`, `experts`, `experts_per_token` and
 * `expert_intermediate_size`, 0 for a dense model; `quant_method` and `quant_group`, the checkpoint's
 * quant_method or 'none' and its columns per weight scale or 0), `hardware` (data/hardware.yaml plus `gpus`, the
 * GPU count) and `workload` (`max_request_tokens`, `max_input_tokens`, `max_output_tokens`,
 * `shared_prefix_tokens`). CEL's `int` is a BigInt here: integer fields are passed as BigInt, or `%`
 * and `==` against an int literal fail; `min`/`max` are added for ints and doubles.
 */

export type CelValue = bigint | number | boolean | string | null | CelValue[] | { [k: string]: CelValue };
export type CelMap = Record<string, CelValue>;
export interface CelVars {
  config: CelMap;
  model: CelMap;
  hardware: CelMap;
  workload: CelMap;
}

export interface Compiled {
  readonly source: string;
  /** Knobs of the space the expression reads (a memory built-in reads the knobs its simulator formula reads, for any model). */
  readonly reads: readonly string[];
  /** Of `reads`, those it names as `config.x` (or all, when it uses `config` whole): read whatever the model. */
  readonly direct: readonly string[];
  /** The memory built-ins it calls: what they read depends on the model (`memoryReads`). */
  readonly memoryCalls: readonly MemoryFunctionName[];
  readonly usesMemory: boolean;
  run(vars: CelVars): unknown;
}

export interface Where {
  readonly what: string;
  readonly file: string;
  readonly line: number | null;
}

/** Supplies a memory built-in's value for a config in the context being evaluated. */
export type MemoryLookup = (fn: MemoryFunctionName, config: () => ServerConfig) => number;

const MODEL_INT_FIELDS = new Set([
  'layers',
  'hidden_size',
  'num_attention_heads',
  'num_kv_heads',
  'head_dim',
  'intermediate_size',
  'vocab_size',
  'native_context',
]);

/** The fields `contextVars` adds to the catalog's own: what an expression may read besides ModelSpec's and Hardware's keys. */
const MODEL_EXTRA_FIELDS = ['is_moe', 'experts', 'experts_per_token', 'expert_intermediate_size', 'quant_method', 'quant_group'] as const;
const WORKLOAD_FIELDS = ['name', 'max_request_tokens', 'max_input_tokens', 'max_output_tokens', 'shared_prefix_tokens'] as const;

/**
 * Every field of `model`, `hardware` and `workload` a context supplies. Checked at load time because
 * CEL's `||` and `&&` absorb an error on one side ("No such key" || true is true), so a misspelt field
 * (`hardware.platfrom`) would otherwise switch a rule off silently, not fail.
 */
export const CONTEXT_FIELDS: Readonly<Record<'model' | 'hardware' | 'workload', readonly string[]>> = {
  model: [...Object.keys(ModelSpec.shape), ...MODEL_EXTRA_FIELDS],
  hardware: [...Object.keys(Hardware.shape), 'gpus'],
  workload: WORKLOAD_FIELDS,
};

function plainToCel(v: unknown): CelValue {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(plainToCel);
  if (typeof v === 'object') {
    const out: CelMap = {};
    for (const [k, x] of Object.entries(v)) out[k] = plainToCel(x);
    return out;
  }
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'bigint') return v;
  return null;
}

/** The `model`, `hardware` and `workload` maps of a context. Doubles stay numbers; counts become ints. */
export function contextVars(ctx: SpaceContext): Omit<CelVars, 'config'> {
  const model = plainToCel(ctx.model) as CelMap;
  for (const f of MODEL_INT_FIELDS) {
    const v = (ctx.model as unknown as Record<string, unknown>)[f];
    if (typeof v === 'number') model[f] = BigInt(v);
  }
  // MoE shape as flat fields (0 / false for a dense model), so rules need no null checks.
  const moe = ctx.model.moe;
  model['is_moe'] = moe !== null;
  model['experts'] = BigInt(moe?.experts ?? 0);
  model['experts_per_token'] = BigInt(moe?.top_k ?? 0);
  model['expert_intermediate_size'] = BigInt(moe?.expert_intermediate_size ?? 0);
  // The checkpoint's quant_method ('none' unquantized) and the columns per weight scale a slice must hold (0: none).
  model['quant_method'] = checkpointQuantMethod(ctx.model);
  model['quant_group'] = BigInt(quantGroupColumns(ctx.model) ?? 0);
  const hardware = plainToCel(ctx.hardware) as CelMap;
  hardware['gpus'] = BigInt(ctx.gpuCount);
  const w = ctx.workload;
  const workload: CelMap = {
    name: w.name,
    max_request_tokens: BigInt(maxRequestTokens(w)),
    max_input_tokens: BigInt(maxLength(w.input_len) + (w.shared_prefix?.length ?? 0)),
    max_output_tokens: BigInt(maxLength(w.output_len)),
    shared_prefix_tokens: BigInt(w.shared_prefix?.length ?? 0),
  };
  return { model, hardware, workload };
}

/** A knob value as CEL sees it: ints of int knobs as BigInt, float knobs as doubles. */
export function knobToCel(value: KnobValue, isInt: boolean): CelValue {
  return typeof value === 'number' && isInt ? BigInt(Math.round(value)) : value;
}

function celToPlain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [String(k), celToPlain(x)]));
  return v;
}

/** A CEL config map back to a ServerConfig (BigInt → number). */
export function celToConfig(m: unknown): ServerConfig {
  const out: Record<string, unknown> = {};
  if (m !== null && typeof m === 'object') {
    const entries = m instanceof Map ? [...m.entries()] : Object.entries(m);
    for (const [k, v] of entries) out[String(k)] = celToPlain(v);
  }
  return out;
}

const stripStrings = (s: string): string => s.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');

export class CelEngine {
  readonly #env: Environment;
  #memory: MemoryLookup | undefined;

  constructor() {
    const env = new Environment()
      .registerVariable('config', 'map')
      .registerVariable('model', 'map')
      .registerVariable('hardware', 'map')
      .registerVariable('workload', 'map')
      .registerFunction('min(int, int): int', (a: bigint, b: bigint) => (a < b ? a : b))
      .registerFunction('max(int, int): int', (a: bigint, b: bigint) => (a > b ? a : b))
      .registerFunction('min(double, double): double', (a: number, b: number) => Math.min(a, b))
      .registerFunction('max(double, double): double', (a: number, b: number) => Math.max(a, b));
    for (const [name, fact] of Object.entries(MEMORY_FUNCTIONS) as [MemoryFunctionName, (typeof MEMORY_FUNCTIONS)[MemoryFunctionName]][]) {
      env.registerFunction(`${name}(map): ${fact.type}`, (config: unknown) => {
        if (this.#memory === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', `${name}() called without a context`);
        const v = this.#memory(name, () => celToConfig(config));
        return fact.type === 'int' ? BigInt(Math.floor(v)) : v;
      });
    }
    this.#env = env;
  }

  /** The memory lookup the memory built-ins call; set per context by the evaluator. */
  setMemory(lookup: MemoryLookup | undefined): void {
    this.#memory = lookup;
  }

  /**
   * Compiles an expression, type-checks it and works out which knobs it reads. A syntax or type error,
   * a non-boolean result type (when `bool`), or a knob the space lacks is LMB_ERR_RULE_INVALID naming
   * the rule and its line. `knobs` are the names the expression may read from `config`.
   */
  compile(source: string, where: Where, knobs: readonly string[], opts: { bool: boolean; memory?: boolean; later?: readonly string[] }): Compiled {
    const fail = (msg: string): never => {
      const at = where.line === null ? where.file : `${where.file}:${where.line}`;
      throw new LmBenchError('LMB_ERR_RULE_INVALID', `${at}: ${where.what}: ${msg}`, {
        details: { file: where.file, line: where.line, rule: where.what, expression: source },
      });
    };
    let fn: ReturnType<Environment['parse']>;
    try {
      fn = this.#env.parse(source);
    } catch (err) {
      const msg = err instanceof ParseError || err instanceof Error ? err.message : String(err);
      return fail(msg.split('\n')[0] ?? msg);
    }
    const checked = fn.check();
    if (!checked.valid) return fail(checked.error?.message.split('\n')[0] ?? 'type error');
    if (opts.bool && checked.type !== 'bool' && checked.type !== 'dyn') return fail(`must yield a bool, yields ${checked.type}`);

    const text = stripStrings(source);
    const called = (Object.keys(MEMORY_FUNCTIONS) as MemoryFunctionName[]).filter((f) => new RegExp(`\\b${f}\\s*\\(`).test(text));
    const usesMemory = called.length > 0;
    // Defaults, conditions and symbols are evaluated outside any rule table: keep them free of the memory model.
    if (usesMemory && opts.memory === false) fail(`memory built-ins (${called.join(', ')}) may be called in rules only`);
    const named = new Set([...text.matchAll(/\bconfig\s*\.\s*([a-z_][a-z0-9_]*)/g)].map((m) => m[1] ?? ''));
    const guarded = new Set([...text.matchAll(/\bhas\s*\(\s*config\s*\.\s*([a-z_][a-z0-9_]*)\s*\)/g)].map((m) => m[1] ?? ''));
    // `config` used whole (passed to a function, indexed, sized) reads every knob.
    const whole = /\bconfig\b(?!\s*\.)/.test(text.replace(new RegExp(`\\b(${Object.keys(MEMORY_FUNCTIONS).join('|')})\\s*\\(\\s*config\\s*\\)`, 'g'), ''));
    const direct = new Set<string>();
    for (const n of named) {
      if (knobs.includes(n)) direct.add(n);
      else if (opts.later?.includes(n) === true) fail(`reads config.${n}, which is declared after this knob; a condition may read only knobs declared before it (move ${n} above)`);
      else if (!guarded.has(n)) fail(`reads config.${n}, which is not a knob of this space (guard optional knobs with has(config.${n}))`);
    }
    for (const m of text.matchAll(/(?<![\w.])(model|hardware|workload)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) {
      const root = m[1] as keyof typeof CONTEXT_FIELDS;
      const field = m[2] ?? '';
      const guard = new RegExp(`\\bhas\\s*\\(\\s*${root}\\s*\\.\\s*${field}\\s*\\)`);
      if (!CONTEXT_FIELDS[root].includes(field) && !guard.test(text)) {
        fail(`reads ${root}.${field}, which no ${root} has; known: ${CONTEXT_FIELDS[root].join(', ')}`);
      }
    }
    if (whole) for (const n of knobs) direct.add(n);
    const reads = new Set(direct);
    for (const f of called) for (const n of MEMORY_FUNCTIONS[f].reads) if (knobs.includes(n)) reads.add(n);
    return {
      source,
      reads: knobs.filter((k) => reads.has(k)),
      direct: knobs.filter((k) => direct.has(k)),
      memoryCalls: called,
      usesMemory,
      run: (vars): unknown => {
        const out: unknown = fn(vars);
        return out;
      },
    };
  }
}

/**
 * The knobs an expression reads in a context with this model, in the space's order: its `reads` less
 * those only its memory built-ins would read and this model's memory ignores (a dense model's
 * data_parallel_size, enable_expert_parallel). A rule table over these is as exact as over `reads`,
 * and smaller by those knobs' grids.
 */
export function readsFor(expr: Compiled, model: ModelSpec): readonly string[] {
  if (expr.memoryCalls.length === 0) return expr.reads;
  const memory = new Set(expr.memoryCalls.flatMap((f) => memoryReads(f, model)));
  return expr.reads.filter((k) => memory.has(k) || expr.direct.includes(k));
}

/** Fills `{config.x}`, `{model.x}`, `{hardware.x}`, `{workload.x}` and `{memory.x}` in a rule message. */
export function formatMessage(template: string, vars: CelVars, memory: () => MemoryFacts | undefined): string {
  return template.replace(/\{(config|model|hardware|workload|memory)\.([a-z_][a-z0-9_]*)\}/g, (whole, root: string, key: string) => {
    let v: unknown;
    if (root === 'memory') {
      const facts = memory() as unknown as Record<string, unknown> | undefined;
      v = facts?.[key];
    } else {
      v = vars[root as keyof CelVars][key];
    }
    if (v === undefined || v === null) return whole;
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(2)));
    if (typeof v === 'string' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
    return whole;
  });
}
