import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { LineCounter, isNode, parseDocument } from 'yaml';
import { PROJECT_ROOT } from '../catalog/index.js';
import { ServerConfig, type AnyKnobName } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { parseYaml, readUserFile, schemaError } from '../util/yaml.js';
import { CelEngine, CONTEXT_FIELDS, type Compiled } from './cel.js';
import { MEMORY_FUNCTIONS } from './memory.js';
import { MAX_GRID_POINTS, contains, defaultGrid, defaultGridSize, type GridValue, type Knob } from './knob.js';
import { SpaceFile, type KnobDef, type RuleDef, type RuleKind } from './schema.js';
import { expectedType, vllmRefuses } from './vllm-values.js';

/**
 * Loads one or more search-space files into a compiled definition. Files are merged in order, each
 * after the files it `extends` (depth first): a knob of the same name replaces the earlier one in
 * place, a rule of the same id replaces the earlier one in place (`disabled: true` drops it), new
 * knobs and rules are appended. Then every expression is compiled once; problems name file and line.
 */

export interface CompiledKnob {
  readonly knob: Knob;
  readonly isInt: boolean;
  readonly when: Compiled | undefined;
  readonly default: { readonly value: number | boolean | string } | { readonly expr: Compiled } | undefined;
  readonly file: string;
  readonly line: number | null;
}

export interface CompiledRule {
  readonly id: string;
  readonly kind: RuleKind;
  readonly require: string;
  readonly message: string;
  readonly source: string;
  readonly compiled: Compiled;
  readonly file: string;
  readonly line: number | null;
}

export interface SpaceDefinition {
  readonly name: string;
  readonly description: string | undefined;
  readonly files: readonly string[];
  readonly symbols: ReadonlyMap<string, Compiled>;
  readonly knobs: readonly CompiledKnob[];
  readonly rules: readonly CompiledRule[];
  readonly engine: CelEngine;
}

interface Located<T> {
  readonly def: T;
  readonly file: string;
  readonly line: number | null;
}

interface Loaded {
  readonly file: string;
  readonly data: SpaceFile;
  readonly lineOf: (path: (string | number)[]) => number | null;
}

const SERVER_KNOBS: readonly string[] = Object.keys(ServerConfig.shape);
const SPACES_DIR = join(PROJECT_ROOT, 'search-spaces');

function readSpaceFile(file: string): Loaded {
  const text = readUserFile(file, 'search-space file');
  const data = parseYaml(text, SpaceFile, { file, code: 'LMB_ERR_SPACE_INVALID' });
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const lineOf = (path: (string | number)[]): number | null => {
    for (let n = path.length; n >= 0; n--) {
      const node: unknown = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
    }
    return null;
  };
  return { file, data, lineOf };
}

function resolveExtends(from: string, ref: string): string {
  if (isAbsolute(ref)) return ref;
  const local = resolve(dirname(from), ref);
  // `extends: vllm.yaml` from a user's own folder means the shipped space.
  if (!existsSync(local) && existsSync(join(SPACES_DIR, ref))) return join(SPACES_DIR, ref);
  return local;
}

function collect(file: string, stack: string[], out: Loaded[]): void {
  const abs = resolve(file);
  if (stack.includes(abs)) {
    throw new LmBenchError('LMB_ERR_SPACE_INVALID', `${abs}: extends itself through ${stack.join(' → ')}`, { details: { file: abs } });
  }
  const loaded = readSpaceFile(abs);
  const bases = loaded.data.extends === undefined ? [] : [loaded.data.extends].flat();
  for (const b of bases) {
    const base = resolveExtends(abs, b);
    if (!existsSync(base)) {
      throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${abs}:${loaded.lineOf(['extends']) ?? '?'}: extends: ${b} → ${base}: no such file`, { details: { file: abs, field: 'extends', value: b } });
    }
    collect(base, [...stack, abs], out);
  }
  if (!out.some((l) => l.file === abs)) out.push(loaded);
}

const invalid = (file: string, line: number | null, path: string, message: string): LmBenchError =>
  schemaError('LMB_ERR_SPACE_INVALID', file, [{ path, line, message }]);

/**
 * The knob's type is the one its vLLM argument has, and every value it can take (bounds, grid, the
 * grid its step generates, categorical values, alias targets, a literal default) is one vLLM accepts.
 */
function checkVllmValues(name: AnyKnobName, def: KnobDef, f: Loaded): void {
  const at = (...path: (string | number)[]): number | null => f.lineOf(['knobs', name, ...path]);
  const want = expectedType(name);
  if (def.type !== want) throw invalid(f.file, at('type'), `knobs.${name}.type`, `${name} is ${want === 'int' ? 'an int' : `a ${want}`} in vLLM, not ${def.type === 'int' ? 'an int' : `a ${def.type}`}`);
  const refuse = (value: number | string | boolean, ...path: (string | number)[]): void => {
    const why = vllmRefuses(name, value, { bound: path[0] === 'low' || path[0] === 'high' });
    if (why !== null) throw invalid(f.file, at(...path), ['knobs', name, ...path].join('.'), why);
  };
  switch (def.type) {
    case 'int':
    case 'float': {
      refuse(def.low, 'low');
      refuse(def.high, 'high');
      for (const [i, g] of (def.grid ?? []).entries()) if (typeof g === 'number') refuse(g, 'grid', i);
      // A generated grid: its size is checked (MAX_GRID_POINTS) before it is built.
      if (def.grid === undefined && defaultGridSize(def.low, def.high, def.log, def.step) <= MAX_GRID_POINTS) {
        for (const v of defaultGrid(def.type, def.low, def.high, def.log, def.step)) {
          const why = vllmRefuses(name, v);
          if (why !== null) throw invalid(f.file, at(def.step === undefined ? 'low' : 'step'), `knobs.${name}.${def.step === undefined ? 'low' : 'step'}`, `${why} (a value of the grid the range generates; give a grid)`);
        }
      }
      break;
    }
    case 'categorical':
      for (const [i, v] of def.values.entries()) refuse(v, 'values', i);
      break;
    case 'bool':
      break;
  }
  if (def.default !== undefined && typeof def.default !== 'object' && !(typeof def.default === 'string' && def.type !== 'categorical')) refuse(def.default, 'default');
}

export function loadSpaceDefinition(paths: string | readonly string[]): SpaceDefinition {
  const list = [paths].flat();
  if (list.length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'no search-space file given');
  const files: Loaded[] = [];
  for (const p of list) collect(p, [], files);

  const symbols = new Map<string, Located<string>>();
  const knobs = new Map<string, Located<KnobDef>>();
  const rules = new Map<string, Located<RuleDef>>();
  let name: string | undefined;
  let description: string | undefined;
  for (const f of files) {
    name = f.data.name ?? name;
    description = f.data.description ?? description;
    for (const [s, def] of Object.entries(f.data.symbols ?? {})) symbols.set(s, { def: def.expr, file: f.file, line: f.lineOf(['symbols', s, 'expr']) });
    for (const [k, def] of Object.entries(f.data.knobs ?? {})) {
      if (!SERVER_KNOBS.includes(k)) {
        throw invalid(f.file, f.lineOf(['knobs', k]), `knobs.${k}`, `"${k}" is not a vLLM engine argument lm-bench can pass; known: ${SERVER_KNOBS.join(', ')}`);
      }
      checkVllmValues(k as AnyKnobName, def, f);
      knobs.set(k, { def, file: f.file, line: f.lineOf(['knobs', k]) });
    }
    // Within one file an id names one rule: a second would silently replace the first (only a later
    // file may override an inherited rule of the same id).
    const seen = new Map<string, number>();
    for (const [i, def] of (f.data.rules ?? []).entries()) {
      const earlier = seen.get(def.id);
      if (earlier !== undefined) {
        throw invalid(f.file, f.lineOf(['rules', i, 'id']), `rules.${i}.id`, `rule id "${def.id}" is used twice in this file (also rules.${earlier}, line ${f.lineOf(['rules', earlier, 'id']) ?? '?'}); ids must be unique within a file`);
      }
      seen.set(def.id, i);
      if (def.disabled === true) rules.delete(def.id);
      else rules.set(def.id, { def, file: f.file, line: f.lineOf(['rules', i, 'require']) });
    }
  }
  if (knobs.size === 0) throw invalid(files.at(-1)?.file ?? String(list[0]), 1, 'knobs', 'the space has no knobs');

  const engine = new CelEngine();
  const knobNames = [...knobs.keys()];
  const compiledSymbols = new Map<string, Compiled>();
  for (const [s, loc] of symbols) {
    compiledSymbols.set(s, engine.compile(loc.def, { what: `symbol ${s}`, file: loc.file, line: loc.line }, [], { bool: false, memory: false }));
  }
  const compiledKnobs: CompiledKnob[] = [];
  for (const [i, [k, loc]] of [...knobs.entries()].entries()) {
    compiledKnobs.push(compileKnob(k, loc, { engine, earlier: knobNames.slice(0, i), all: knobNames, symbols: compiledSymbols }));
  }
  const compiledRules: CompiledRule[] = [...rules.values()].map(({ def, file, line }) => {
    const require = def.require ?? 'true'; // the schema demands it of every rule not disabled
    checkPlaceholders(def, file, line, knobNames);
    return {
      id: def.id,
      kind: def.kind,
      require,
      message: def.message ?? '',
      source: def.source ?? '',
      compiled: engine.compile(require, { what: `rule ${def.id}`, file, line }, knobNames, { bool: true }),
      file,
      line,
    };
  });
  return {
    name: name ?? 'space',
    description,
    files: files.map((f) => f.file),
    symbols: compiledSymbols,
    knobs: compiledKnobs,
    rules: compiledRules,
    engine,
  };
}

const MEMORY_FIELDS: readonly string[] = Object.values(MEMORY_FUNCTIONS).map((f) => f.field);

/**
 * A `{root.field}` of a rule message names a knob of the space or a field its context has: a typo
 * (`{config.max_num_seq}`) was printed as written in every removal the rule explained.
 */
function checkPlaceholders(def: RuleDef, file: string, line: number | null, knobs: readonly string[]): void {
  for (const m of (def.message ?? '').matchAll(/\{(config|model|hardware|workload|memory)\.([a-z_][a-z0-9_]*)\}/g)) {
    const root = m[1] as 'config' | 'model' | 'hardware' | 'workload' | 'memory';
    const field = m[2] ?? '';
    const known = root === 'config' ? knobs : root === 'memory' ? MEMORY_FIELDS : CONTEXT_FIELDS[root];
    if (!known.includes(field)) {
      throw new LmBenchError('LMB_ERR_RULE_INVALID', `${line === null ? file : `${file}:${line}`}: rule ${def.id}: its message shows {${root}.${field}}, which ${root === 'config' ? 'is not a knob of this space' : `no ${root} has`}; known: ${known.join(', ')}`, {
        details: { file, line, rule: def.id, field: 'message' },
      });
    }
  }
}

interface KnobScope {
  readonly engine: CelEngine;
  /** Knobs declared before this one (what `when` may read) and all knobs (what defaults may read). */
  readonly earlier: readonly string[];
  readonly all: readonly string[];
  readonly symbols: ReadonlyMap<string, Compiled>;
}

function compileKnob(name: string, loc: Located<KnobDef>, scope: KnobScope): CompiledKnob {
  const { engine, earlier, all, symbols } = scope;
  const { def, file, line } = loc;
  const base = { name, flag: def.flag ?? `--${name.replaceAll('_', '-')}`, description: def.description, source: def.source, when: def.when, keepsPrecision: def.keeps_precision };
  let knob: Knob;
  switch (def.type) {
    case 'int':
    case 'float': {
      if (def.grid === undefined && defaultGridSize(def.low, def.high, def.log, def.step) > MAX_GRID_POINTS) {
        throw invalid(file, line, `knobs.${name}`, `[${def.low}, ${def.high}] ${def.step === undefined ? 'without a step' : `in steps of ${def.step}`} makes ${defaultGridSize(def.low, def.high, def.log, def.step).toExponential(2)} grid points (at most ${MAX_GRID_POINTS}); give a grid, a larger step, or log: true`);
      }
      const grid: GridValue[] = (def.grid ?? defaultGrid(def.type, def.low, def.high, def.log, def.step)).map((g) => {
        if (typeof g === 'number') return g;
        if (!symbols.has(g)) throw invalid(file, line, `knobs.${name}.grid`, `unknown symbol "${g}" (declare it under symbols:)`);
        return { symbol: g };
      });
      knob = { ...base, type: def.type, low: def.low, high: def.high, log: def.log, step: def.step, grid };
      break;
    }
    case 'categorical':
      for (const [alias, target] of Object.entries(def.aliases ?? {})) {
        if (!def.values.includes(target)) throw invalid(file, line, `knobs.${name}.aliases.${alias}`, `"${target}" is not one of the values`);
      }
      knob = { ...base, type: 'categorical', values: def.values, aliases: def.aliases ?? {} };
      break;
    case 'bool':
      knob = { ...base, type: 'bool' };
      break;
  }
  const when = def.when === undefined ? undefined : engine.compile(def.when, { what: `knobs.${name}.when`, file, line }, earlier, { bool: true, memory: false, later: all.filter((k) => k !== name && !earlier.includes(k)) });
  let dflt: CompiledKnob['default'];
  const d = def.default;
  if (d === undefined) dflt = undefined;
  else if (typeof d === 'object') dflt = { expr: engine.compile(d.expr, { what: `knobs.${name}.default`, file, line }, all, { bool: false, memory: false }) };
  else {
    const isSymbol = typeof d === 'string' && knob.type !== 'categorical' && symbols.has(d);
    if (!isSymbol && !contains(knob, d)) throw invalid(file, line, `knobs.${name}.default`, `${JSON.stringify(d)} is outside the knob's domain`);
    dflt = { value: d };
  }
  return { knob, isInt: def.type === 'int', when, default: dflt, file, line };
}
