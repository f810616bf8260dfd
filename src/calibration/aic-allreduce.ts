import { PROFILE_BOUNDS, type Hardware, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { linkBytesPerS } from '../physics/step-shapes.js';
import { parseCsv, positiveField, positiveIntegerField } from './csv.js';

/**
 * vLLM's custom allreduce timed alone under CUDA graphs on H100s (aiconfigurator's
 * `custom_allreduce_perf` tables, data/calibration/aiconfigurator-kernels/allreduce.csv) against what the
 * step model charges one allreduce: `allreduce_nvlink_us` plus the ring's bytes at `link_efficiency` of
 * the NVLink bandwidth (physics/step-time.ts). The serving fit's silicon rows are all TP ≥ 2, so they fix
 * the sum of a layer's fixed time and its two allreduces' fixed time, not the split: the kernel says where
 * the split lies, and `kernelAllreduceUs` pins `allreduce_nvlink_us` to it (scripts/calibrate.ts).
 */

export interface AllreduceRow {
  readonly version: string;
  readonly gpus: number;
  /** bf16 elements reduced (tokens × hidden size). */
  readonly elements: number;
  readonly ms: number;
}

export function parseAllreduceRows(text: string, file: string): AllreduceRow[] {
  const { records } = parseCsv(text, file);
  return records.map((r) => ({
    version: r.fields['vllm_version'] ?? '',
    gpus: positiveIntegerField(r, file, 'num_gpus'),
    elements: positiveIntegerField(r, file, 'message_elems'),
    ms: positiveField(r, file, 'latency_ms'),
  }));
}

/** The fit on TP ≥ 2 rows alone (data/sim-profile.yaml until 2026-12-07), before the allreduce was pinned. */
const UNPINNED_FIT = { allreduceUs: 20.9, layerUs: 24.31 } as const;

/** Messages this small are latency-bound: the ring's bytes add under a microsecond on any NVLink H100 pair. */
const SMALL_ELEMENTS = 8192;

/**
 * The fixed cost of one allreduce, in µs: the median kernel time of the small messages (every GPU count
 * and release). What a decode step's allreduces cost before any byte moves.
 */
export function kernelAllreduceUs(rows: readonly AllreduceRow[]): number {
  const us = rows.filter((r) => r.elements <= SMALL_ELEMENTS).map((r) => r.ms * 1000).sort((a, b) => a - b);
  if (us.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `no allreduce row of ${SMALL_ELEMENTS} elements or fewer: the kernel's fixed cost is not measured`);
  const mid = Math.floor(us.length / 2);
  return us.length % 2 === 1 ? (us[mid] as number) : ((us[mid - 1] as number) + (us[mid] as number)) / 2;
}

/** What the step model charges one allreduce of `elements` bf16 values over `gpus` GPUs, in ms. */
export function profileAllreduceMs(profile: SimProfile, hw: Hardware, gpus: number, elements: number): number {
  const bytes = (2 * (gpus - 1) * elements * 2) / gpus;
  return profile.allreduce_nvlink_us / 1000 + (bytes / (linkBytesPerS(hw) * profile.link_efficiency)) * 1000;
}

/** Sizes the table shows: the smallest message, a decode step of 8 tokens of a 8,192-wide model, and 128 of them. */
const SHOWN = [128, 65_536, 1_048_576] as const;

export function allreduceSection(rows: readonly AllreduceRow[], profile: SimProfile, hw: Hardware): string {
  const at = (v: string, n: number, m: number): number | undefined => rows.find((r) => r.version === v && r.gpus === n && r.elements === m)?.ms;
  const keys = [...new Set(rows.map((r) => `${r.version}|${r.gpus}`))];
  const lines = keys.map((k) => {
    const [v = '', n = '0'] = k.split('|');
    const cells = SHOWN.map((m) => {
      const kernel = at(v, Number(n), m);
      const model = profileAllreduceMs(profile, hw, Number(n), m);
      return `${kernel === undefined ? '–' : (kernel * 1000).toFixed(1)} | ${(model * 1000).toFixed(1)}`;
    });
    return `| ${v} | ${n} | ${cells.join(' | ')} |`;
  });
  const floors = rows.filter((r) => r.elements <= SMALL_ELEMENTS).map((r) => r.ms * 1000);
  const floorText = floors.length === 0 ? '–' : `${Math.min(...floors).toFixed(1)}–${Math.max(...floors).toFixed(1)} µs`;
  const kernelUs = floors.length === 0 ? null : kernelAllreduceUs(rows);
  // What the fit on TP ≥ 2 rows alone gave a layer beyond the kernel's two allreduces (2026-12-07's profile).
  const movedUs = 2 * (UNPINNED_FIT.allreduceUs - (kernelUs ?? 0));
  const stepAtFloor = profile.step_fixed_ms <= PROFILE_BOUNDS.step_fixed_ms[0] * 1.25;
  const pinned = kernelUs !== null && Math.abs(profile.allreduce_nvlink_us - kernelUs) < 0.01;
  return `### The allreduce against its kernel (its fixed cost pinned to it)

vLLM's custom allreduce timed alone under CUDA graphs on ${hw.id} GPUs (aiconfigurator's \`custom_allreduce_perf\`
tables, \`data/calibration/aiconfigurator-kernels/allreduce.csv\`), in µs, beside what the step model charges one
(\`allreduce_nvlink_us\` ${profile.allreduce_nvlink_us} µs plus the ring's bytes at \`link_efficiency\` ${profile.link_efficiency} of NVLink):

| vLLM | GPUs | ${SHOWN.map((m) => `${m.toLocaleString('en-US')} elements: kernel | model`).join(' | ')} |
| --- | --- | ${SHOWN.map(() => '--- | ---').join(' | ')} |
${lines.join('\n')}

A small allreduce takes ${floorText} under graphs (median ${kernelUs === null ? '–' : kernelUs.toFixed(2)} µs). The silicon rows cannot tell the two fixed
costs of a layer apart: they are all tensor-parallel, where every layer pays \`layer_fixed_us\` and two
allreduces, so they fix only the sum. Fitted on them alone (the profile until 2026-12-07), the allreduce
took ${UNPINNED_FIT.allreduceUs} µs and the layer ${UNPINNED_FIT.layerUs} µs: about ${movedUs.toFixed(0)} µs a layer that every layer pays sat in the
allreduces, which a tensor-parallel size of 1 does not run, and the held-out TP 1 rows' decode steps came
out 0.8–1.4 ms too fast on Qwen3 8B to 32B. Since then \`allreduce_nvlink_us\` is ${pinned ? 'pinned to the kernel\'s median' : `${profile.allreduce_nvlink_us} µs, not the kernel's median: rerun scripts/calibrate.ts to pin it`};
on 2026-12-07 the difference moved into \`layer_fixed_us\` (which left every H100 TP ≥ 2 row as it was), and the layer's
and the step's fixed costs were refitted with GPUStack's TP 1 TPOTs as the fit's first TP 1 rows. This
profile: \`layer_fixed_us\` ${profile.layer_fixed_us} µs, \`step_fixed_ms\` ${profile.step_fixed_ms}${stepAtFloor ? ' (near the floor of its range: the rows put the fixed cost in the layers, not the step)' : ''}.
A GPU whose override scales \`layer_fixed_us\` (the A100's, from Vidur's small kernels) scales that share too, and
a PCIe GPU at TP ≥ 2 now pays it beside its unchanged \`allreduce_pcie_us\`; no row checks either.`;
}
