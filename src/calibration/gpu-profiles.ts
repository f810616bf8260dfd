import type { Catalog } from '../catalog/index.js';
import { PROFILE_BOUNDS, hasFp8Compute, parseVllmVersion, withOverrides, withinBounds, type Hardware, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { fitKernelEfficiency, GEMM_OPS, kernelMape, kernelOverrides, smallKernelsUs, type KernelEfficiency, type KernelRow } from './vidur-kernels.js';
import { PROFILE_MOE_FAMILY, fitMoeFamilies, moeOverrides, moeShape, type AicMoeRow, type MoeFamilyFit, type MoeShapeRow } from './aic-moe.js';
import { mape } from './grid-search.js';
import { pct } from './report-format.js';
import { isStreamedAttention, isStreamedGemm, aicAttentionMs, aicGemmMs, fitAllAicKernels, type AicAttentionRow, type AicGemmRow, type AicKernelFit } from './aic-kernels.js';

/**
 * Per-GPU `sim:` overrides (data/hardware.yaml) fitted on per-operator kernel times, relative to the
 * reference GPU the serving profile was fitted on. Two sources: aiconfigurator's kernel databases
 * (aic-kernels.ts: vLLM 0.14 and 0.24 GEMMs and decode attention on H100, A100, L40S and B200), which
 * give each GPU's weight streaming, bf16 and fp8 MFU and KV-cache reading against the H100 of the same
 * vLLM version; and Vidur's (vidur-kernels.ts: 2024 GEMMs and small kernels on A100 and H100), which
 * gives the small kernels' time per layer and a second, older opinion on the A100's GEMMs. Where both
 * measure a thing the newer vLLM's kernels win. GPUs of the same silicon with other memory (A100 40 GB)
 * or of the same architecture without data (L4, an Ada like the L40S) take the fitted GPU's overrides.
 * What the fit leaves out is reported beside it: each GPU priced with the reference's efficiencies (its
 * datasheet alone: leave one GPU out) and, on Vidur's rows, each model by the fit on the others.
 */

/** The GPU the serving profile is fitted on. */
export const REFERENCE_GPU = 'H100-SXM';
/**
 * GPUs without kernel data that take a fitted GPU's overrides: the same chip with other memory (the
 * A100s), or the same architecture and kernels on a smaller chip (the L4 and L40S are both Ada, GDDR6).
 */
export const SAME_KERNELS: Readonly<Record<string, readonly string[]>> = { 'A100-80GB': ['A100-40GB'], L40S: ['L4'] };

/** Tokens of the MoE shape table: decode steps of 1–256 requests, prefill chunks of 1,024–8,192 tokens. */
const MOE_SHAPE_TOKENS: readonly number[] = [1, 16, 64, 256, 1024, 8192];
export type GpuOverrides = Partial<Pick<SimProfile, 'eta_weights' | 'eta_kv' | 'kv_fp8_efficiency' | 'mfu_bf16' | 'mfu_fp8' | 'layer_fixed_us' | 'moe_efficiency' | 'moe_weight_efficiency'>>;

export interface GpuKernelFit {
  readonly gpu: string;
  readonly rows: number;
  readonly models: readonly string[];
  readonly fit: KernelEfficiency;
  readonly smallUs: number;
  /** GEMM MAPE with the GPU's own fit, and with the reference GPU's efficiencies (the datasheet alone). */
  readonly fitMape: number;
  readonly datasheetMape: number;
  /** Each model predicted by the fit on the GPU's other models. */
  readonly lomo: readonly { readonly model: string; readonly rows: number; readonly fit: KernelEfficiency; readonly mape: number }[];
}

/** One GPU of aiconfigurator's data against the reference GPU of the same vLLM version. */
export interface AicGpuFit {
  readonly fit: AicKernelFit;
  readonly ref: AicKernelFit;
  /**
   * GEMM and attention MAPE with the reference's efficiencies at this GPU's datasheet (leave the GPU
   * out); attention keeps this GPU's own launch cost, a property of the microbenchmark's loop.
   */
  readonly gemmMapeRefEff: number;
  readonly attentionMapeRefEff: number;
}

export interface KernelData {
  readonly vidur: readonly KernelRow[];
  readonly aicGemms: readonly AicGemmRow[];
  readonly aicAttention: readonly AicAttentionRow[];
  readonly aicMoe: readonly AicMoeRow[];
}

export interface GpuProfileFit {
  /** Vidur's rows: the reference and each other GPU. */
  readonly reference: GpuKernelFit;
  readonly gpus: readonly GpuKernelFit[];
  /** aiconfigurator's rows: every (GPU, vLLM version), the reference's included, and each other GPU against its reference. */
  readonly aic: readonly AicKernelFit[];
  readonly aicGpus: readonly AicGpuFit[];
  /** aiconfigurator's MoE rows: every (GPU, expert format) under the GPU's profile with its dense overrides. */
  readonly moe: readonly MoeFamilyFit[];
  /** The MoE layer of a serving run (the profile with every override) beside the kernels, by tokens, on one GPU. */
  readonly moeShape: readonly MoeShapeRow[];
  /** The overrides per catalog GPU id (same-kernel GPUs included), and which GPU's data each rests on. */
  readonly overrides: Readonly<Record<string, GpuOverrides>>;
  readonly basis: Readonly<Record<string, string>>;
  /** `sim_recent` per catalog GPU id: decode attention at the kernels' own rate, for vLLM ≥ 0.14 (domain/vllm-release.ts). */
  readonly recent: Readonly<Record<string, GpuOverrides>>;
  readonly recentBasis: Readonly<Record<string, string>>;
}

/** GPUs that take the reference's kernels' decode rate: the other Hoppers (the same FlashAttention 3 kernels). */
export const SAME_KERNELS_AS_REFERENCE: readonly string[] = ['H100-PCIe', 'H200'];

/**
 * The decode attention of vLLM 0.14 and later as each GPU's kernels measure it (the earliest release in
 * the tables): the KV read efficiency of the bf16 cache and the fp8 cache's rate over it, as measured,
 * not as ratios to the fitted profile, whose `eta_kv` stands for the fit set's vLLM 0.10–0.12 servers.
 */
export function recentOverrides(aic: readonly AicKernelFit[]): { recent: Record<string, GpuOverrides>; basis: Record<string, string> } {
  const recent: Record<string, GpuOverrides> = {};
  const basis: Record<string, string> = {};
  const byGpu = new Map<string, AicKernelFit>();
  for (const f of aic) {
    const had = byGpu.get(f.gpu);
    if (had === undefined || versionOrder(f.version) < versionOrder(had.version)) byGpu.set(f.gpu, f);
  }
  for (const [gpu, f] of byGpu) {
    const o: GpuOverrides = { eta_kv: withinBounds(PROFILE_BOUNDS, 'eta_kv', f.eta_kv) };
    if (f.fp8KvEfficiency !== null) o.kv_fp8_efficiency = withinBounds(PROFILE_BOUNDS, 'kv_fp8_efficiency', f.fp8KvEfficiency);
    const why = `decode attention as aiconfigurator's vLLM ${f.version} kernels read the KV cache`;
    const siblings = gpu === REFERENCE_GPU ? SAME_KERNELS_AS_REFERENCE : (SAME_KERNELS[gpu] ?? []);
    recent[gpu] = o;
    basis[gpu] = why;
    for (const id of siblings) {
      recent[id] = o;
      basis[id] = `as the ${gpu}'s (the same kernels), ${why}`;
    }
  }
  return { recent, basis };
}

/** A release as a number that sorts as releases do (major, minor, patch). */
function versionOrder(v: string): number {
  const p = parseVllmVersion(v);
  return p === null ? Number.POSITIVE_INFINITY : p[0] * 1e6 + p[1] * 1e3 + p[2];
}

function fitOne(rows: readonly KernelRow[], hw: Hardware, floorUs: number, ref: KernelEfficiency | null): GpuKernelFit {
  const fit = fitKernelEfficiency(rows, hw, floorUs);
  const models = [...new Set(rows.map((r) => r.model))];
  return {
    gpu: hw.id,
    rows: rows.length,
    models,
    fit,
    smallUs: smallKernelsUs(rows),
    fitMape: kernelMape(rows, hw, fit, floorUs),
    datasheetMape: kernelMape(rows, hw, ref ?? fit, floorUs),
    lomo:
      models.length < 2
        ? []
        : models.map((m) => {
            const held = rows.filter((r) => r.model === m);
            const rest = fitKernelEfficiency(
              rows.filter((r) => r.model !== m),
              hw,
              floorUs,
            );
            return { model: m, rows: held.length, fit: rest, mape: kernelMape(held, hw, rest, floorUs) };
          }),
  };
}

/**
 * The serving profile's streaming, MFU and KV-reading efficiencies scaled by the ratio of this GPU's
 * kernel efficiencies to the reference's (fp8 only where the GPU has fp8 and the data measured it),
 * each inside the profile's plausible range. The fp8 KV cache's efficiency is taken as measured, not as
 * a ratio, on a GPU of another architecture than the reference: the profile's value stands for the
 * reference's old FlashAttention 3 fp8 path (sim-profile.ts), which no other architecture ever ran.
 */
export function aicOverrides(
  profile: SimProfile,
  f: AicGpuFit,
  hw: Hardware,
  refArch: string,
  bounds: Readonly<Record<'eta_weights' | 'eta_kv' | 'kv_fp8_efficiency' | 'mfu_bf16' | 'mfu_fp8', readonly [number, number]>>,
): GpuOverrides {
  const clamp = (k: keyof typeof bounds, v: number): number => withinBounds(bounds, k, v);
  const o: GpuOverrides = {
    eta_weights: clamp('eta_weights', profile.eta_weights * (f.fit.eta_weights / f.ref.eta_weights)),
    eta_kv: clamp('eta_kv', profile.eta_kv * (f.fit.eta_kv / f.ref.eta_kv)),
    mfu_bf16: clamp('mfu_bf16', profile.mfu_bf16 * (f.fit.mfu_bf16 / f.ref.mfu_bf16)),
  };
  if (hasFp8Compute(hw) && f.fit.mfu_fp8 !== null && f.ref.mfu_fp8 !== null) o.mfu_fp8 = clamp('mfu_fp8', profile.mfu_fp8 * (f.fit.mfu_fp8 / f.ref.mfu_fp8));
  if (hw.arch !== refArch && f.fit.fp8KvEfficiency !== null) o.kv_fp8_efficiency = clamp('kv_fp8_efficiency', f.fit.fp8KvEfficiency);
  return o;
}

function aicAgainstRef(fit: AicKernelFit, ref: AicKernelFit, data: KernelData, hw: Hardware, floorUs: number): AicGpuFit {
  const gemms = data.aicGemms.filter((g) => g.gpu === fit.gpu && g.version === fit.version && isStreamedGemm(g));
  const attention = data.aicAttention.filter((a) => a.gpu === fit.gpu && a.version === fit.version && a.kvDtype === 'bf16' && isStreamedAttention(a));
  return {
    fit,
    ref,
    gemmMapeRefEff: mape(gemms.map((g) => [aicGemmMs(g, hw, ref.eta_weights, g.dtype === 'fp8' ? (ref.mfu_fp8 ?? ref.mfu_bf16) : ref.mfu_bf16, floorUs), g.ms])),
    attentionMapeRefEff: mape(attention.map((a) => [aicAttentionMs(a, hw, ref.eta_kv, fit.attentionLaunchUs), a.ms])),
  };
}

export function fitGpuProfiles(data: KernelData, catalog: Catalog, profile: SimProfile): GpuProfileFit {
  const floorUs = profile.kernel_floor_us;
  const refRows = data.vidur.filter((r) => r.gpu === REFERENCE_GPU);
  if (refRows.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `the kernel data has no ${REFERENCE_GPU} rows to take ratios against`);
  const reference = fitOne(refRows, catalog.gpu(REFERENCE_GPU), floorUs, null);
  const gpus = [...new Set(data.vidur.map((r) => r.gpu))].filter((g) => g !== REFERENCE_GPU).map((g) => fitOne(
    data.vidur.filter((r) => r.gpu === g),
    catalog.gpu(g),
    floorUs,
    reference.fit,
  ));
  const aic = fitAllAicKernels(data.aicGemms, data.aicAttention, (id) => catalog.gpu(id), floorUs);
  const aicGpus = aic
    .filter((f) => f.gpu !== REFERENCE_GPU)
    .map((f) => {
      const ref = aic.find((r) => r.gpu === REFERENCE_GPU && r.version === f.version);
      if (ref === undefined) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `aiconfigurator's kernel data has ${f.gpu} rows of vLLM ${f.version} but no ${REFERENCE_GPU} rows of that version to take ratios against`);
      return aicAgainstRef(f, ref, data, catalog.gpu(f.gpu), floorUs);
    });
  const overrides: Record<string, GpuOverrides> = {};
  const basis: Record<string, string> = {};
  const set = (gpu: string, o: GpuOverrides, why: string): void => {
    for (const id of [gpu, ...(SAME_KERNELS[gpu] ?? [])]) {
      overrides[id] = { ...overrides[id], ...o };
      const line = id === gpu ? why : `as the ${gpu}'s (the same kernels), ${why}`;
      basis[id] = basis[id] === undefined ? line : `${basis[id]}; ${why}`;
    }
  };
  // Vidur first, so that the newer vLLM's kernels (aiconfigurator's) replace what both measure.
  for (const g of gpus) {
    const o = kernelOverrides(profile, { gpu: g.fit, ref: reference.fit, smallUs: g.smallUs, refSmallUs: reference.smallUs }, PROFILE_BOUNDS);
    const gemmsToo = !aic.some((f) => f.gpu === g.gpu);
    set(g.gpu, gemmsToo ? o : { layer_fixed_us: o.layer_fixed_us }, gemmsToo ? 'GEMMs and small kernels from Vidur' : 'small kernels from Vidur');
  }
  const refArch = catalog.gpu(REFERENCE_GPU).arch;
  for (const f of aicGpus) {
    const o = aicOverrides(profile, f, catalog.gpu(f.fit.gpu), refArch, PROFILE_BOUNDS);
    set(f.fit.gpu, o, `GEMMs and decode attention from aiconfigurator's vLLM ${f.fit.version} tables${o.kv_fp8_efficiency === undefined ? '' : ' (kv_fp8_efficiency as measured, not a ratio)'}`);
  }
  // MoE: each GPU's expert kernels priced with its dense overrides in place, so that the ratio is the
  // experts' own; only the family the profile's MoE efficiencies were fitted on carries.
  const moe = fitMoeFamilies(data.aicMoe, catalog, (gpu) => withOverrides(profile, overrides[gpu]));
  const moeRef = moe.find((m) => m.gpu === REFERENCE_GPU && m.dtype === PROFILE_MOE_FAMILY);
  for (const m of moe.filter((x) => x.gpu !== REFERENCE_GPU && x.dtype === PROFILE_MOE_FAMILY)) {
    if (moeRef === undefined) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `aiconfigurator's MoE data has ${m.gpu} rows but no ${REFERENCE_GPU} rows of the same experts to take ratios against`);
    set(m.gpu, moeOverrides(profile, m.fit, moeRef.fit, PROFILE_BOUNDS), `MoE from aiconfigurator's ${PROFILE_MOE_FAMILY} expert kernels`);
  }
  const shape = moeShape(data.aicMoe, catalog, (gpu) => withOverrides(profile, overrides[gpu]), MOE_SHAPE_TOKENS);
  const r = recentOverrides(aic);
  return { reference, gpus, aic, aicGpus, moe, moeShape: shape, overrides, basis, recent: r.recent, recentBasis: r.basis };
}

export function gpuKernelTable(f: GpuProfileFit): string {
  const line = (g: GpuKernelFit, isRef: boolean): string =>
    `| ${g.gpu} | ${g.models.length} | ${g.rows * GEMM_OPS.length} | ${g.fit.eta_weights} | ${g.fit.mfu_bf16} | ${g.smallUs.toFixed(1)} | ${pct(g.fitMape)} | ${isRef ? '–' : pct(g.datasheetMape)} | ${g.lomo.map((l) => `${l.model.split('/').pop() ?? l.model} ${pct(l.mape)}`).join('; ') || '–'} |`;
  return [
    `| GPU | models | GEMMs | streaming efficiency | bf16 MFU | small kernels per layer (µs, ≤ 64 tokens) | GEMM MAPE, own fit | GEMM MAPE, ${REFERENCE_GPU} efficiencies (leave the GPU out) | leave one model out: held-out GEMM MAPE |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    line(f.reference, true),
    ...f.gpus.map((g) => line(g, false)),
  ].join('\n');
}

/**
 * hardware.yaml with `sim:` (or `key`, e.g. `sim_recent`) set for `gpu` (replacing the line if there is one,
 * else before the GPU's `source:`): a text edit, so the file's comments and layout stay as written.
 */
export function withSimLine(yamlText: string, gpu: string, overrides: GpuOverrides, comment: string, key: 'sim' | 'sim_recent' = 'sim'): string {
  const lines = yamlText.split('\n');
  const start = lines.findIndex((l) => l.trim() === `- id: ${gpu}`);
  if (start < 0) throw new LmBenchError('LMB_ERR_UNKNOWN_GPU', `data/hardware.yaml has no GPU ${gpu}`, { details: { gpu } });
  let end = lines.findIndex((l, i) => i > start && l.trim().startsWith('- id: '));
  if (end < 0) end = lines.length;
  const indent = (lines[start + 1] ?? '').match(/^\s*/)?.[0] ?? '    ';
  const body = `${indent}${key}: { ${Object.entries(overrides).map(([k, v]) => `${k}: ${v}`).join(', ')} }`;
  const note = `${indent}# ${comment}`;
  const block = lines.slice(start, end).filter((l, i, all) => !l.trim().startsWith(`${key}:`) && !(l.trim().startsWith('# ') && all[i + 1]?.trim().startsWith(`${key}:`) === true));
  const src = block.findIndex((l) => l.trim().startsWith('source:'));
  block.splice(src < 0 ? block.length : src, 0, note, body);
  return [...lines.slice(0, start), ...block, ...lines.slice(end)].join('\n');
}
