import { LmBenchError } from '../errors.js';

/**
 * A typed-array evaluator for XGBoost gbtree models, built from the binary model that ml-xgboost's
 * `toJSON()` carries (XGBoost's legacy binary format: LearnerModelParam, objective and booster names,
 * GBTreeModelParam, then each RegTree's TreeParam, nodes and stats, then tree_info).
 *
 * Why: ml-xgboost predicts one row per WebAssembly call (~4 µs a row plus 0.05 µs a tree), so scoring
 * 100k candidates × an ensemble × several targets through `predict` takes tens of seconds. Walking the
 * trees over a Float32Array in JS is several times faster and needs no WebAssembly memory at all.
 * Comparisons and sums are done in float32 (Math.fround) so results agree with `predict` exactly.
 */
export interface TreeEnsemble {
  readonly numFeature: number;
  readonly baseScore: number;
  readonly objective: string;
  readonly numTrees: number;
  /** Root node index of each tree in the flat node arrays. */
  readonly roots: Int32Array;
  readonly left: Int32Array;
  readonly right: Int32Array;
  /** Split feature, or -1 at a leaf. */
  readonly feature: Int32Array;
  /** Split threshold at an inner node, leaf value at a leaf. */
  readonly value: Float32Array;
  readonly defaultLeft: Uint8Array;
}

/** Rows × cols features, row-major, float32 as XGBoost sees them. */
export interface FeatureMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float32Array;
}

class Reader {
  #view: DataView;
  #off = 0;
  constructor(bytes: Uint8Array) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get offset(): number {
    return this.#off;
  }
  need(n: number): void {
    if (this.#off + n > this.#view.byteLength) {
      throw new LmBenchError('LMB_ERR_INTERNAL', `xgboost model truncated at byte ${this.#off} (need ${n} more)`);
    }
  }
  i32(): number {
    this.need(4);
    const v = this.#view.getInt32(this.#off, true);
    this.#off += 4;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.#view.getUint32(this.#off, true);
    this.#off += 4;
    return v;
  }
  f32(): number {
    this.need(4);
    const v = this.#view.getFloat32(this.#off, true);
    this.#off += 4;
    return v;
  }
  u64(): number {
    const lo = this.u32();
    const hi = this.u32();
    return hi * 2 ** 32 + lo;
  }
  skip(n: number): void {
    this.need(n);
    this.#off += n;
  }
  str(): string {
    const n = this.u64();
    this.need(n);
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(this.#view.getUint8(this.#off + i));
    this.#off += n;
    return s;
  }
  peek4(): string {
    this.need(4);
    let s = '';
    for (let i = 0; i < 4; i++) s += String.fromCharCode(this.#view.getUint8(this.#off + i));
    return s;
  }
}

export function parseXgbModel(bytes: Uint8Array): TreeEnsemble {
  const r = new Reader(bytes);
  if (r.peek4() === 'binf') r.skip(4);
  // LearnerModelParam: base_score, num_feature, num_class, contain_extra_attrs, contain_eval_metrics, reserved[29].
  const baseScore = r.f32();
  const numFeature = r.u32();
  const numClass = r.i32();
  r.skip(4 + 4 + 29 * 4);
  const objective = r.str();
  const gbm = r.str();
  if (gbm !== 'gbtree') throw new LmBenchError('LMB_ERR_INTERNAL', `unsupported booster "${gbm}"`);
  if (numClass > 1) throw new LmBenchError('LMB_ERR_INTERNAL', 'multi-class models are not supported');
  // GBTreeModelParam: num_trees, num_roots, num_feature, pad, int64 num_pbuffer, num_output_group, size_leaf_vector, reserved[32].
  const numTrees = r.i32();
  const numRoots = r.i32();
  r.skip(4 + 4 + 8);
  const numOutputGroup = r.i32();
  r.skip(4 + 32 * 4);
  if (numRoots !== 1 || numOutputGroup > 1) throw new LmBenchError('LMB_ERR_INTERNAL', 'only single-root, single-output trees are supported');
  const trees: { n: number; parent: Int32Array; l: Int32Array; rr: Int32Array; s: Uint32Array; v: Float32Array }[] = [];
  let total = 0;
  for (let t = 0; t < numTrees; t++) {
    // TreeParam: num_roots, num_nodes, num_deleted, max_depth, num_feature, size_leaf_vector, reserved[31].
    r.skip(4);
    const n = r.i32();
    r.skip(4 * 4 + 31 * 4);
    const tree = { n, parent: new Int32Array(n), l: new Int32Array(n), rr: new Int32Array(n), s: new Uint32Array(n), v: new Float32Array(n) };
    for (let i = 0; i < n; i++) {
      tree.parent[i] = r.i32();
      tree.l[i] = r.i32();
      tree.rr[i] = r.i32();
      tree.s[i] = r.u32();
      tree.v[i] = r.f32();
    }
    r.skip(n * 16); // RTreeNodeStat: loss_chg, sum_hess, base_weight, leaf_child_cnt
    trees.push(tree);
    total += n;
  }
  const roots = new Int32Array(numTrees);
  const left = new Int32Array(total);
  const right = new Int32Array(total);
  const feature = new Int32Array(total);
  const value = new Float32Array(total);
  const defaultLeft = new Uint8Array(total);
  let base = 0;
  trees.forEach((tree, t) => {
    roots[t] = base;
    for (let i = 0; i < tree.n; i++) {
      const k = base + i;
      const l = tree.l[i] ?? -1;
      const s = tree.s[i] ?? 0;
      value[k] = tree.v[i] ?? 0;
      if (l === -1) {
        feature[k] = -1;
      } else {
        left[k] = base + l;
        right[k] = base + (tree.rr[i] ?? 0);
        feature[k] = s & 0x7fffffff;
        defaultLeft[k] = s >>> 31;
      }
    }
    base += tree.n;
  });
  return { numFeature, baseScore, objective, numTrees, roots, left, right, feature, value, defaultLeft };
}

/** Raw margin (base score + sum of leaves) for every row, in float32 arithmetic as XGBoost does. */
export function predictMargin(model: TreeEnsemble, x: FeatureMatrix, out: Float64Array = new Float64Array(x.rows)): Float64Array {
  const { roots, left, right, feature, value, defaultLeft, numTrees } = model;
  const { data, cols } = x;
  const fround = Math.fround;
  for (let row = 0; row < x.rows; row++) {
    const off = row * cols;
    let sum = 0;
    for (let t = 0; t < numTrees; t++) {
      let k = roots[t] ?? 0;
      let f = feature[k] ?? -1;
      while (f >= 0) {
        const fv = data[off + f] ?? Number.NaN;
        const thr = value[k] ?? 0;
        if (Number.isNaN(fv)) k = defaultLeft[k] === 1 ? (left[k] ?? 0) : (right[k] ?? 0);
        else k = fv < thr ? (left[k] ?? 0) : (right[k] ?? 0);
        f = feature[k] ?? -1;
      }
      sum = fround(sum + (value[k] ?? 0));
    }
    out[row] = fround(sum + model.baseScore);
  }
  return out;
}

/** Predictions after the objective's transform (identity for regression, sigmoid for binary:logistic). */
export function predictEnsemble(model: TreeEnsemble, x: FeatureMatrix, out?: Float64Array): Float64Array {
  const margin = predictMargin(model, x, out);
  if (model.objective === 'binary:logistic') {
    // float32 at each step, as XGBoost's 1.0f / (1.0f + expf(-x)).
    const fr = Math.fround;
    for (let i = 0; i < margin.length; i++) margin[i] = fr(1 / fr(1 + fr(Math.exp(-(margin[i] ?? 0)))));
  }
  return margin;
}

export function toFeatureMatrix(rows: readonly (readonly number[])[], cols?: number): FeatureMatrix {
  const c = cols ?? rows[0]?.length ?? 0;
  const data = new Float32Array(rows.length * c);
  rows.forEach((row, i) => data.set(row, i * c));
  return { rows: rows.length, cols: c, data };
}
