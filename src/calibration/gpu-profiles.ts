import type { Catalog } from '../catalog/index.js';
import { PROFILE_BOUNDS, type Hardware, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { fitKernelEfficiency, GEMM_OPS, kernelMape, kernelOverrides, smallKernelsUs, type KernelEfficiency, type KernelRow } from './vidur-kernels.js';

/**
 * Per-GPU `sim:` overrides (data/hardware.yaml) fitted on per-operator kernel times: each GPU of the
 * kernel data gets its efficiencies relative to the reference GPU the serving profile was fitted on
 * (`kernelOverrides`), and GPUs of the same silicon with other memory (A100 40 GB and 80 GB) share
 * them. What the fit leaves out is reported beside it: each model of a GPU predicted by the fit on the
 * others (leave one model out), and each GPU by the reference GPU's efficiencies, its datasheet alone
 * (leave one GPU out).
 */

/** The GPU the serving profile is fitted on. */
export const REFERENCE_GPU = 'H100-SXM';
/** GPUs with the same chip and kernels as one of the kernel data, but other memory: they take its overrides. */
export const SAME_SILICON: Readonly<Record<string, readonly string[]>> = { 'A100-80GB': ['A100-40GB'] };
export type GpuOverrides = Pick<SimProfile, 'eta_weights' | 'eta_kv' | 'mfu_bf16' | 'layer_fixed_us'>;

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

export interface GpuProfileFit {
  readonly reference: GpuKernelFit;
  readonly gpus: readonly GpuKernelFit[];
  /** The overrides per catalog GPU id (same-silicon GPUs included). */
  readonly overrides: Readonly<Record<string, GpuOverrides>>;
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

export function fitGpuProfiles(rows: readonly KernelRow[], catalog: Catalog, profile: SimProfile): GpuProfileFit {
  const floorUs = profile.kernel_floor_us;
  const refRows = rows.filter((r) => r.gpu === REFERENCE_GPU);
  if (refRows.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `the kernel data has no ${REFERENCE_GPU} rows to take ratios against`);
  const reference = fitOne(refRows, catalog.gpu(REFERENCE_GPU), floorUs, null);
  const gpus = [...new Set(rows.map((r) => r.gpu))].filter((g) => g !== REFERENCE_GPU).map((g) => fitOne(
    rows.filter((r) => r.gpu === g),
    catalog.gpu(g),
    floorUs,
    reference.fit,
  ));
  const overrides: Record<string, GpuOverrides> = {};
  for (const g of gpus) {
    const o = kernelOverrides(profile, { gpu: g.fit, ref: reference.fit, smallUs: g.smallUs, refSmallUs: reference.smallUs }, PROFILE_BOUNDS);
    for (const id of [g.gpu, ...(SAME_SILICON[g.gpu] ?? [])]) overrides[id] = o;
  }
  return { reference, gpus, overrides };
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

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
 * hardware.yaml with `sim:` set for `gpu` (replacing the line if there is one, else before the GPU's
 * `source:`): a text edit, so the file's comments and layout stay as written.
 */
export function withSimLine(yamlText: string, gpu: string, overrides: GpuOverrides, comment: string): string {
  const lines = yamlText.split('\n');
  const start = lines.findIndex((l) => l.trim() === `- id: ${gpu}`);
  if (start < 0) throw new LmBenchError('LMB_ERR_UNKNOWN_GPU', `data/hardware.yaml has no GPU ${gpu}`, { details: { gpu } });
  let end = lines.findIndex((l, i) => i > start && l.trim().startsWith('- id: '));
  if (end < 0) end = lines.length;
  const indent = (lines[start + 1] ?? '').match(/^\s*/)?.[0] ?? '    ';
  const body = `${indent}sim: { ${Object.entries(overrides).map(([k, v]) => `${k}: ${v}`).join(', ')} }`;
  const note = `${indent}# ${comment}`;
  const block = lines.slice(start, end).filter((l, i, all) => !l.trim().startsWith('sim:') && !(l.trim().startsWith('# ') && all[i + 1]?.trim().startsWith('sim:') === true));
  const src = block.findIndex((l) => l.trim().startsWith('source:'));
  block.splice(src < 0 ? block.length : src, 0, note, body);
  return [...lines.slice(0, start), ...block, ...lines.slice(end)].join('\n');
}
