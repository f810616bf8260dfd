import type { Catalog } from '../catalog/index.js';
import { withinBounds, type Hardware, type ModelSpec, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { moeLayerCost, resolveConfig } from '../physics/index.js';
import { grid2, mape, meanAbsLog, steps } from './grid-search.js';
import { parseCsv, positiveField } from './csv.js';

/**
 * Per-GPU efficiencies of the routed-expert layer from aiconfigurator's MoE kernel table
 * (data/calibration/aiconfigurator-kernels/moe.csv): vLLM's fused-MoE kernels timed alone by tokens and
 * TP / EP layout under balanced routing, for gpt-oss's MXFP4 experts (OpenAI's Triton kernels on the
 * H100, FlashInfer's TRT-LLM MXFP4 × bf16 ones on the B200) and Qwen3-30B-A3B's bf16 experts (Triton on
 * the H100, FlashInfer's TRT-LLM bf16 ones on the B200). Each row is priced by the step-time model's own MoE
 * layer (`moeLayerCost`: the touched experts' weights at `eta_weights` × `moe_weight_efficiency` of the
 * bandwidth against their FLOPs at `mfu_bf16` × `moe_efficiency` of the bf16 peak, plus the router and
 * permutation kernels) under the GPU's profile, and the two MoE efficiencies are fitted per GPU. What
 * carries to another GPU is their ratio to the H100's, as for the dense kernels (gpu-profiles.ts).
 */

export interface AicMoeRow {
  readonly gpu: string;
  /** The experts' format: MXFP4 weights with bf16 activations (gpt-oss), or bf16 (Qwen3-30B-A3B). */
  readonly dtype: 'mxfp4' | 'bf16';
  readonly version: string;
  readonly tokens: number;
  readonly hiddenSize: number;
  readonly interSize: number;
  readonly topK: number;
  readonly experts: number;
  readonly tp: number;
  readonly ep: number;
  readonly ms: number;
}

export function parseAicMoe(text: string, file: string): AicMoeRow[] {
  return parseCsv(text, file).records.map((r) => {
    const dtype = r.fields['moe_dtype'] === 'w4a16_mxfp4' ? 'mxfp4' : r.fields['moe_dtype'] === 'bfloat16' ? 'bf16' : null;
    if (dtype === null) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: moe_dtype must be w4a16_mxfp4 or bfloat16, got "${r.fields['moe_dtype'] ?? ''}"`, { details: { file, line: r.line, field: 'moe_dtype' } });
    return {
      gpu: r.fields['gpu'] ?? '',
      dtype,
      version: r.fields['vllm_version'] ?? '',
      tokens: positiveField(r, file, 'num_tokens'),
      hiddenSize: positiveField(r, file, 'hidden_size'),
      interSize: positiveField(r, file, 'inter_size'),
      topK: positiveField(r, file, 'topk'),
      experts: positiveField(r, file, 'num_experts'),
      tp: positiveField(r, file, 'moe_tp_size'),
      ep: positiveField(r, file, 'moe_ep_size'),
      ms: positiveField(r, file, 'latency_ms'),
    };
  });
}

/** The catalog model whose routed experts have the row's shape and format (MXFP4: the gpt-oss models; bf16: an unquantised checkpoint). */
export function moeModelOf(row: AicMoeRow, catalog: Catalog): ModelSpec {
  const m = catalog.models.find((x) => (row.dtype === 'mxfp4' ? x.native_quantization === 'mxfp4' : x.native_quantization === 'none') && x.hidden_size === row.hiddenSize && x.moe !== null && x.moe.experts === row.experts && x.moe.top_k === row.topK && x.moe.expert_intermediate_size === row.interSize);
  if (m === undefined) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `no catalog model has ${row.dtype} experts of ${row.experts} × top-${row.topK}, hidden ${row.hiddenSize}, intermediate ${row.interSize}`, { details: { field: 'moe' } });
  return m;
}

/** ms of one MoE layer for the row's tokens and layout, as a step prices it under `profile`. */
export function aicMoeMs(row: AicMoeRow, model: ModelSpec, hw: Hardware, profile: SimProfile): number {
  const ranks = row.tp * row.ep;
  const r = resolveConfig({ tensor_parallel_size: ranks, enable_expert_parallel: row.ep > 1 }, hw, model);
  return moeLayerCost(r, hw, model, profile)(row.tokens) * 1000;
}

export interface MoeEfficiency {
  readonly moe_efficiency: number;
  readonly moe_weight_efficiency: number;
}

/** (predicted, measured) ms of every row under `profile` with the MoE efficiencies `e`. */
export type MoePricer = (e: MoeEfficiency) => [number, number][];

/** Resolves each row's model and layout once, for the many efficiencies a grid tries. */
export function moePricer(rows: readonly AicMoeRow[], catalog: Catalog, hw: Hardware, profile: SimProfile): MoePricer {
  const prepared = rows.map((row) => {
    const model = moeModelOf(row, catalog);
    return { row, model, r: resolveConfig({ tensor_parallel_size: row.tp * row.ep, enable_expert_parallel: row.ep > 1 }, hw, model) };
  });
  return (e) => {
    const p = { ...profile, ...e };
    return prepared.map(({ row, model, r }) => [moeLayerCost(r, hw, model, p)(row.tokens) * 1000, row.ms]);
  };
}

export function moePairs(rows: readonly AicMoeRow[], catalog: Catalog, hw: Hardware, profile: SimProfile, e: MoeEfficiency): [number, number][] {
  return moePricer(rows, catalog, hw, profile)(e);
}

/**
 * The two MoE efficiencies minimising the mean |log error| over one GPU's rows under its profile. The
 * kernel-level values are relative to that profile's dense efficiencies, so they may exceed the
 * serving profile's bounds; only their ratio between GPUs is used.
 */
export function fitMoeEfficiency(rows: readonly AicMoeRow[], catalog: Catalog, hw: Hardware, profile: SimProfile): MoeEfficiency {
  const price = moePricer(rows, catalog, hw, profile);
  const [c, w] = grid2(steps(0.05, 2, 0.025), steps(0.1, 3, 0.025), (moe_efficiency, moe_weight_efficiency) => meanAbsLog(price({ moe_efficiency, moe_weight_efficiency })));
  return { moe_efficiency: c, moe_weight_efficiency: w };
}

/**
 * The expert format the serving profile's MoE efficiencies were fitted on (gpt-oss-120b's MXFP4 experts
 * on the H100, docs/calibration.md): the family whose ratio between GPUs carries to the profile.
 */
export const PROFILE_MOE_FAMILY = 'mxfp4';

export interface MoeFamilyFit {
  readonly gpu: string;
  readonly dtype: AicMoeRow['dtype'];
  readonly rows: number;
  readonly fit: MoeEfficiency;
  readonly mape: number;
  /** Each model of the family predicted by the fit on the family's other models (none when it has one). */
  readonly lomo: readonly { readonly model: string; readonly rows: number; readonly mape: number }[];
}

/** Every (GPU, expert format) of the rows fitted under that GPU's own profile (its dense overrides applied). */
export function fitMoeFamilies(rows: readonly AicMoeRow[], catalog: Catalog, profileOf: (gpu: string) => SimProfile): MoeFamilyFit[] {
  const keys = [...new Set(rows.map((r) => `${r.gpu}\u0000${r.dtype}`))];
  return keys.map((key) => {
    const [gpu, dtype] = key.split('\u0000') as [string, AicMoeRow['dtype']];
    const hw = catalog.gpu(gpu);
    const profile = profileOf(gpu);
    const rs = rows.filter((r) => r.gpu === gpu && r.dtype === dtype);
    const fit = fitMoeEfficiency(rs, catalog, hw, profile);
    const models = [...new Set(rs.map((r) => moeModelOf(r, catalog).id))];
    return {
      gpu,
      dtype,
      rows: rs.length,
      fit,
      mape: mape(moePairs(rs, catalog, hw, profile, fit)),
      lomo:
        models.length < 2
          ? []
          : models.map((m) => {
              const held = rs.filter((r) => moeModelOf(r, catalog).id === m);
              const rest = fitMoeEfficiency(rs.filter((r) => moeModelOf(r, catalog).id !== m), catalog, hw, profile);
              return { model: m, rows: held.length, mape: mape(moePairs(held, catalog, hw, profile, rest)) };
            }),
    };
  });
}

/** One layer's time as the serving profile prices it beside the kernel's, by tokens (`moeShape`). */
export interface MoeShapeRow {
  readonly gpu: string;
  readonly model: string;
  readonly tokens: number;
  readonly kernelMs: number;
  readonly simulatedMs: number;
}

/**
 * The single-GPU rows (TP 1, no EP) of each GPU and model at `tokens`, priced under the profile a
 * serving run of that GPU uses (`profileOf`: the MoE overrides in place): how the fitted MoE layer
 * compares with the kernels from a decode step's few tokens to a prefill chunk's thousands.
 */
export function moeShape(rows: readonly AicMoeRow[], catalog: Catalog, profileOf: (gpu: string) => SimProfile, tokens: readonly number[]): MoeShapeRow[] {
  return rows
    .filter((r) => r.tp === 1 && r.ep === 1 && tokens.includes(r.tokens))
    .map((r) => {
      const model = moeModelOf(r, catalog);
      return { gpu: r.gpu, model: model.id, tokens: r.tokens, kernelMs: r.ms, simulatedMs: aicMoeMs(r, model, catalog.gpu(r.gpu), profileOf(r.gpu)) };
    })
    .sort((a, b) => a.gpu.localeCompare(b.gpu) || a.model.localeCompare(b.model) || a.tokens - b.tokens);
}

/** The profile's MoE efficiencies scaled by this GPU's kernel ratio to the reference's, inside the bounds. */
export function moeOverrides(profile: SimProfile, gpu: MoeEfficiency, ref: MoeEfficiency, bounds: Readonly<Record<keyof MoeEfficiency, readonly [number, number]>>): MoeEfficiency {
  const clamp = (k: keyof typeof bounds, v: number): number => withinBounds(bounds, k, v);
  return {
    moe_efficiency: clamp('moe_efficiency', profile.moe_efficiency * (gpu.moe_efficiency / ref.moe_efficiency)),
    moe_weight_efficiency: clamp('moe_weight_efficiency', profile.moe_weight_efficiency * (gpu.moe_weight_efficiency / ref.moe_weight_efficiency)),
  };
}
