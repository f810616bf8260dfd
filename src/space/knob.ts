import type { KnobValue } from '../domain/index.js';

/**
 * One knob's distribution (Optuna's `distributions.py` idea): an external value (what vLLM gets: 7,
 * 0.9, "fp8") and an internal float (what the encoder, the samplers and the surrogate see: log2 for
 * log-scaled numbers, the index for categoricals, 0/1 for booleans), plus `contains` and the grid the
 * space is enumerated, sampled and pruned on.
 */
export type GridValue = number | { readonly symbol: string };

interface KnobBase {
  readonly name: string;
  readonly flag: string;
  readonly description: string | undefined;
  readonly source: string | undefined;
  /** CEL source of the activation condition, over knobs declared before this one. */
  readonly when: string | undefined;
  /** Values that keep the checkpoint's numerics; undefined when no value of the knob changes them. */
  readonly keepsPrecision: readonly KnobValue[] | undefined;
}

export interface NumericKnob extends KnobBase {
  readonly type: 'int' | 'float';
  readonly low: number;
  readonly high: number;
  readonly log: boolean;
  readonly step: number | undefined;
  readonly grid: readonly GridValue[];
}

export interface CategoricalKnob extends KnobBase {
  readonly type: 'categorical';
  readonly values: readonly string[];
  /** Alternative spellings → the value they stand for. */
  readonly aliases: Readonly<Record<string, string>>;
}

/** A categorical value with its alias resolved (`fp8` → `fp8_e4m3`). */
export function canonical(knob: CategoricalKnob, value: string): string {
  return knob.aliases[value] ?? value;
}

export interface BoolKnob extends KnobBase {
  readonly type: 'bool';
}

export type Knob = NumericKnob | CategoricalKnob | BoolKnob;

/** Internal float of an external value (log2 for log-scaled numbers, index for categoricals). */
export function toInternal(knob: Knob, value: KnobValue): number {
  switch (knob.type) {
    case 'int':
    case 'float':
      if (typeof value !== 'number') return Number.NaN;
      return knob.log ? Math.log2(value) : value;
    case 'categorical':
      return typeof value === 'string' ? knob.values.indexOf(canonical(knob, value)) : -1;
    case 'bool':
      return value === true ? 1 : 0;
  }
}

/** External value of an internal float: rounded to the step (ints to integers), index clamped. */
export function toExternal(knob: Knob, internal: number): KnobValue {
  switch (knob.type) {
    case 'int':
    case 'float': {
      let v = knob.log ? 2 ** internal : internal;
      if (knob.step !== undefined) v = knob.low + Math.round((v - knob.low) / knob.step) * knob.step;
      if (knob.type === 'int') return Math.round(v);
      // Strip binary noise from the step arithmetic (0.70 + 10 × 0.02 → 0.9, not 0.9000000000000001).
      return Number(v.toPrecision(12));
    }
    case 'categorical': {
      const i = Math.min(knob.values.length - 1, Math.max(0, Math.round(internal)));
      return knob.values[i] ?? knob.values[0] ?? '';
    }
    case 'bool':
      return internal >= 0.5;
  }
}

/**
 * Whether a value lies in the knob's domain: the numeric range (and step), one of the categories,
 * a boolean. `extra` holds values symbols resolved to (e.g. `native` = the model's context length),
 * which count as in the domain even outside [low, high].
 */
export function contains(knob: Knob, value: unknown, extra: readonly number[] = []): boolean {
  switch (knob.type) {
    case 'int':
    case 'float': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      if (extra.includes(value)) return true;
      if (knob.type === 'int' && !Number.isInteger(value)) return false;
      if (value < knob.low - 1e-9 || value > knob.high + 1e-9) return false;
      if (knob.step === undefined) return true;
      const k = (value - knob.low) / knob.step;
      return Math.abs(k - Math.round(k)) < 1e-6;
    }
    case 'categorical':
      return typeof value === 'string' && knob.values.includes(canonical(knob, value));
    case 'bool':
      return typeof value === 'boolean';
  }
}

/** The grid a numeric knob is discretised on when its file gives none: its step, or doublings on a log scale. */
/** The most points a generated grid may have: enumeration, pruning and sampling walk every one. */
export const MAX_GRID_POINTS = 10_000;

/** How many points `defaultGrid` would generate (computed without generating them). */
export function defaultGridSize(low: number, high: number, log: boolean, step: number | undefined): number {
  if (step !== undefined) return Math.floor((high - low) / step + 1e-9) + 1;
  if (log) return Math.floor(Math.log2(high / low) + 1e-9) + 2;
  return Math.floor(high - low) + 1;
}

export function defaultGrid(type: 'int' | 'float', low: number, high: number, log: boolean, step: number | undefined): number[] {
  const out: number[] = [];
  if (step !== undefined) {
    const n = Math.floor((high - low) / step + 1e-9);
    for (let i = 0; i <= n; i++) out.push(Number((low + i * step).toPrecision(12)));
  } else if (log) {
    for (let v = low; v <= high * (1 + 1e-12); v *= 2) out.push(type === 'int' ? Math.round(v) : v);
    if (out[out.length - 1] !== high) out.push(high);
  } else {
    // An int range without a step: every integer (the schema refuses a linear float without one).
    for (let v = low; v <= high; v++) out.push(v);
  }
  return out;
}

/** A symbol resolved in a context: one number (`native`) or a list spliced into a grid (`replica_counts`). */
export type SymbolValue = number | readonly number[];

/**
 * The concrete values of a knob's grid with symbols resolved: deduplicated and ascending, so one grid
 * step (a neighbour, the nearest grid value) is one step in value wherever a symbol's values land.
 */
export function gridValues(knob: Knob, symbols: ReadonlyMap<string, SymbolValue> | undefined): KnobValue[] {
  switch (knob.type) {
    case 'categorical':
      return [...knob.values];
    case 'bool':
      return [false, true];
    case 'int':
    case 'float': {
      const out = new Set<number>();
      for (const g of knob.grid) for (const v of typeof g === 'number' ? [g] : [symbols?.get(g.symbol) ?? []].flat()) out.add(v);
      return [...out].sort((a, b) => a - b);
    }
  }
}
