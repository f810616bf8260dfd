import { z } from 'zod';

/**
 * The zod schema of a search-space file (`search-spaces/*.yaml`), the one source of its types.
 * Strict objects everywhere, so a typo (`hihg:`) is an error with its line, not a silently ignored key.
 *
 * A file declares knobs (vLLM engine arguments with a domain, a discretisation grid for enumeration,
 * a default and an optional activation condition) and constraint rules (CEL expressions that must hold).
 * A file may `extends:` other files; see `search-spaces/README.md` for the merge rules.
 */

/** A CEL expression (https://github.com/google/cel-spec), compiled and type-checked at load time. */
const CelExpr = z.string().trim().min(1, 'expression is empty');

const KnobName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'knob names are vLLM engine-argument names (snake_case)');

/** A default is either a literal or a CEL expression over `config` (knobs defaulted so far), `model`, `hardware`. */
export const KnobDefault = z.union([
  z.number(),
  z.boolean(),
  z.string(),
  z.strictObject({ expr: CelExpr, source: z.string().optional() }),
]);
export type KnobDefault = z.infer<typeof KnobDefault>;

const common = {
  /** The `vllm serve` flag; `--` plus the name with `-` for `_` when left out. */
  flag: z.string().regex(/^--?[a-z0-9][a-z0-9-]*$/, 'a flag looks like --max-num-seqs').optional(),
  description: z.string().optional(),
  source: z.string().optional(),
  /** CEL over knobs declared earlier in the file: the knob exists only when this holds. */
  when: CelExpr.optional(),
  default: KnobDefault.optional(),
  /**
   * The values that keep the checkpoint's numerics (for `quantization`: none). Any other value changes
   * the model's outputs, which recommendations say, and `--keep-precision` pins the knob to the first.
   */
  keeps_precision: z.array(z.union([z.string(), z.number(), z.boolean()])).min(1).optional(),
};

/** Grid entries are numbers or the name of a symbol (such as `native`) resolved per model/hardware. */
const GridEntry = z.union([z.number(), z.string().regex(/^[a-z][a-z0-9_]*$/, 'a symbol name')]);

const numeric = <T extends z.ZodNumber>(n: T) => ({
  low: n,
  high: n,
  /** Log-scaled: sampled and encoded as log2(value). */
  log: z.boolean().default(false),
  step: z.number().positive().optional(),
  /** The discretisation used by enumeration, sampling and pruning; generated when left out. */
  grid: z.array(GridEntry).min(1).optional(),
});

export const IntKnobDef = z.strictObject({ type: z.literal('int'), ...numeric(z.int()), ...common });
export const FloatKnobDef = z.strictObject({ type: z.literal('float'), ...numeric(z.number()), ...common });
export const CategoricalKnobDef = z.strictObject({
  type: z.literal('categorical'),
  values: z.array(z.string().min(1)).min(1),
  /** Other spellings vLLM accepts for a value (`fp8` is `fp8_e4m3`): accepted, encoded as the value. */
  aliases: z.record(z.string().min(1), z.string().min(1)).optional(),
  ...common,
});
export const BoolKnobDef = z.strictObject({ type: z.literal('bool'), ...common });

export const KnobDef = z
  .discriminatedUnion('type', [IntKnobDef, FloatKnobDef, CategoricalKnobDef, BoolKnobDef])
  .superRefine((k, ctx) => {
    if (k.type === 'categorical') {
      // A repeated value would be enumerated, sampled and counted twice; an alias spelt like a value
      // would take that value's place (`auto: fp8_e5m2` turns every `auto` into fp8_e5m2).
      for (const [i, v] of k.values.entries()) {
        if (k.values.indexOf(v) < i) ctx.addIssue({ code: 'custom', path: ['values', i], message: `"${v}" is listed twice` });
      }
      for (const alias of Object.keys(k.aliases ?? {})) {
        if (k.values.includes(alias)) ctx.addIssue({ code: 'custom', path: ['aliases', alias], message: `"${alias}" is one of the values, not another spelling of one` });
      }
      return;
    }
    if (k.type !== 'int' && k.type !== 'float') return;
    if (k.low > k.high) ctx.addIssue({ code: 'custom', path: ['high'], message: `high (${k.high}) is below low (${k.low})` });
    if (k.log && k.low <= 0) ctx.addIssue({ code: 'custom', path: ['low'], message: 'a log-scaled knob needs low > 0' });
    if (k.type === 'int' && k.step !== undefined && !Number.isInteger(k.step)) {
      ctx.addIssue({ code: 'custom', path: ['step'], message: 'an int knob needs an integer step' });
    }
    if (k.grid === undefined && !k.log && k.step === undefined && k.type === 'float') {
      ctx.addIssue({ code: 'custom', path: ['grid'], message: 'a linear float knob needs a step or a grid to be discretised' });
    }
    for (const [i, g] of (k.grid ?? []).entries()) {
      if (typeof g !== 'number') continue;
      if (g < k.low || g > k.high) ctx.addIssue({ code: 'custom', path: ['grid', i], message: `${g} lies outside [${k.low}, ${k.high}]` });
      if (k.type === 'int' && !Number.isInteger(g)) ctx.addIssue({ code: 'custom', path: ['grid', i], message: `${g} is not an integer` });
    }
  });
export type KnobDef = z.infer<typeof KnobDef>;

export const RuleKind = z.enum(['static', 'memory', 'workload', 'policy']);
export type RuleKind = z.infer<typeof RuleKind>;

export const RuleDef = z
  .strictObject({
  id: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, 'a rule id is a short name such as C6 or org.max-tp'),
    /** CEL that must evaluate to true for a feasible configuration. */
    require: CelExpr.optional(),
    /** Shown when the rule removes a configuration; `{config.x}`, `{model.x}`, … are filled in. */
    message: z.string().min(1).optional(),
    /** Where the rule comes from: vLLM source file, issue, reference section or policy owner. */
    source: z.string().min(1).optional(),
    /** static: vLLM validation; memory: start-up memory check; workload: requests rejected; policy: a user's own. */
    kind: RuleKind.default('static'),
    /** In an extending file: drop the rule of this id inherited from a base file (nothing else needed). */
    disabled: z.boolean().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.disabled === true) return;
    for (const f of ['require', 'message', 'source'] as const) {
      if (r[f] === undefined) ctx.addIssue({ code: 'custom', path: [f], message: `a rule needs ${f}` });
    }
  });
export type RuleDef = z.infer<typeof RuleDef>;

export const SymbolDef = z.strictObject({ expr: CelExpr, description: z.string().optional() });

export const SpaceFile = z.strictObject({
  version: z.literal(1),
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  /** Base files, relative to this file, loaded first (depth first, in order). */
  extends: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  /** Named grid values resolved per context, e.g. `native: { expr: model.native_context }`. */
  symbols: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), SymbolDef).optional(),
  knobs: z.record(KnobName, KnobDef).optional(),
  rules: z.array(RuleDef).optional(),
});
export type SpaceFile = z.infer<typeof SpaceFile>;
