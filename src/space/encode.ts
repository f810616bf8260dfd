import type { KnobValue, ServerConfig } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { contains, toExternal, toInternal, type Knob } from './knob.js';

/**
 * The one encoder (Optuna's `_SearchSpaceTransform`): config ⇄ numeric feature vector, shared by
 * the surrogate, the samplers and knob importance.
 *
 * - int/float knobs: one column, log2(value) when log-scaled, else the value;
 * - categorical knobs: one-hot columns `name=value` (unordered categories have no distance);
 * - booleans: one column, 0 or 1.
 *
 * An inactive conditional knob (e.g. `max_cudagraph_capture_size` under `enforce_eager`) encodes as
 * NaN in its numeric column (XGBoost's "missing") and as all zeros in its one-hot columns.
 */
export interface Column {
  readonly knob: number;
  readonly name: string;
  /** For one-hot columns, the category this column stands for. */
  readonly category?: string;
}

export class Encoder {
  readonly knobs: readonly Knob[];
  readonly columns: readonly Column[];
  /** Column range [start, end) of each knob. */
  readonly spans: readonly (readonly [number, number])[];

  constructor(knobs: readonly Knob[]) {
    this.knobs = knobs;
    const columns: Column[] = [];
    const spans: [number, number][] = [];
    knobs.forEach((k, i) => {
      const start = columns.length;
      switch (k.type) {
        case 'int':
        case 'float':
          columns.push({ knob: i, name: k.log ? `log2(${k.name})` : k.name });
          break;
        case 'bool':
          columns.push({ knob: i, name: k.name });
          break;
        case 'categorical':
          for (const v of k.values) columns.push({ knob: i, name: `${k.name}=${v}`, category: v });
          break;
      }
      spans.push([start, columns.length]);
    });
    this.columns = columns;
    this.spans = spans;
  }

  featureNames(): string[] {
    return this.columns.map((c) => c.name);
  }

  encode(config: ServerConfig): Float64Array {
    const out = new Float64Array(this.columns.length);
    const c = config as Record<string, KnobValue | undefined>;
    this.knobs.forEach((k, i) => {
      const [start] = this.spans[i] ?? [0, 0];
      const v = c[k.name];
      if (k.type === 'categorical') {
        if (v === undefined) return;
        const j = toInternal(k, v);
        if (j < 0) throw new LmBenchError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `${k.name} = ${JSON.stringify(v)} is not one of ${k.values.join(', ')}`, { details: { field: k.name, value: v } });
        out[start + j] = 1;
        return;
      }
      out[start] = v === undefined ? Number.NaN : toInternal(k, v);
    });
    return out;
  }

  /**
   * Vector → config: numbers back through exp2 and rounded to the step (ints to integers), one-hot
   * by the largest column, booleans at 0.5. NaN (or all-zero one-hot) leaves the knob unset; the
   * caller decides activity. `snap` maps a numeric knob's value onto its grid when it has one.
   */
  decode(vector: ArrayLike<number>, snap?: (knob: number, value: number) => number): ServerConfig {
    if (vector.length !== this.columns.length) {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `feature vector has ${vector.length} columns, the space has ${this.columns.length}`);
    }
    const out: Record<string, KnobValue> = {};
    this.knobs.forEach((k, i) => {
      const [start, end] = this.spans[i] ?? [0, 0];
      if (k.type === 'categorical') {
        let best = -1;
        let bestV = 0;
        for (let j = start; j < end; j++) {
          const x = vector[j] ?? 0;
          if (x > bestV) {
            bestV = x;
            best = j - start;
          }
        }
        if (best >= 0) out[k.name] = toExternal(k, best);
        return;
      }
      const x = vector[start] ?? Number.NaN;
      if (Number.isNaN(x)) return;
      let v = toExternal(k, x);
      if (typeof v === 'number' && snap !== undefined) v = snap(i, v);
      out[k.name] = v;
    });
    return out;
  }

  /** Whether every knob of a config lies in its domain (`extra`: values symbols resolve to, per knob). */
  contains(config: ServerConfig, extra: (knob: number) => readonly number[] = () => []): boolean {
    const c = config as Record<string, KnobValue | undefined>;
    return this.knobs.every((k, i) => c[k.name] === undefined || contains(k, c[k.name], extra(i)));
  }
}
