import type { Hardware, SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { linkBytesPerS } from '../physics/step-shapes.js';
import { parseCsv, positiveField } from './csv.js';

/**
 * vLLM's custom allreduce timed alone under CUDA graphs on H100s (aiconfigurator's
 * `custom_allreduce_perf` tables, data/calibration/aiconfigurator-kernels/allreduce.csv) against what the
 * step model charges one allreduce: `allreduce_nvlink_us` plus the ring's bytes at `link_efficiency` of
 * the NVLink bandwidth (physics/step-time.ts). A check, not a fit: the fit set's rows are all TP ≥ 2, so
 * they fix the sum of a layer's fixed time and its two allreduces' fixed time, not the split, and the
 * kernel says where the split lies.
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
  return records.map((r) => {
    const gpus = positiveField(r, file, 'num_gpus');
    const elements = positiveField(r, file, 'message_elems');
    if (!Number.isInteger(gpus) || !Number.isInteger(elements)) {
      throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: num_gpus and message_elems must be whole numbers`, { details: { file, line: r.line } });
    }
    return { version: r.fields['vllm_version'] ?? '', gpus, elements, ms: positiveField(r, file, 'latency_ms') };
  });
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
  const floors = rows.filter((r) => r.elements <= 8192).map((r) => r.ms * 1000);
  const floorText = floors.length === 0 ? '–' : `${Math.min(...floors).toFixed(1)}–${Math.max(...floors).toFixed(1)} µs`;
  const perLayerUs = 2 * (profile.allreduce_nvlink_us - (floors.length === 0 ? 0 : Math.max(...floors)));
  return `### The allreduce against its kernel (held out, never fitted)

vLLM's custom allreduce timed alone under CUDA graphs on ${hw.id} GPUs (aiconfigurator's \`custom_allreduce_perf\`
tables, \`data/calibration/aiconfigurator-kernels/allreduce.csv\`), in µs, beside what the step model charges one
(\`allreduce_nvlink_us\` ${profile.allreduce_nvlink_us} µs plus the ring's bytes at \`link_efficiency\` ${profile.link_efficiency} of NVLink):

| vLLM | GPUs | ${SHOWN.map((m) => `${m.toLocaleString('en-US')} elements: kernel | model`).join(' | ')} |
| --- | --- | ${SHOWN.map(() => '--- | ---').join(' | ')} |
${lines.join('\n')}

A small allreduce takes ${floorText} under graphs, where the fitted profile charges ${profile.allreduce_nvlink_us} µs before
any byte moves. The fit set cannot tell the two fixed costs of a layer apart: its dense rows are all
tensor-parallel, where every layer pays \`layer_fixed_us\` and two allreduces, so only their sum is fitted
(moving 12.9 µs an allreduce into the layer leaves every fit-set figure above unchanged to the digit). By
the kernel, about ${perLayerUs.toFixed(0)} µs a layer of what the fit calls allreduce is time every layer pays, which a
tensor-parallel size of 1 is then not charged: in line with the held-out TP 1 rows, whose decode steps
the simulator made 0.8–1.4 ms too fast on Qwen3 8B to 32B on 2026-12-07 (the low-load check above, and
ML.ENERGY's sweeps below). Not yet refitted: pinning the allreduce to its kernel moves the layer's share into
\`layer_fixed_us\` or the step's fixed costs, which a fit with TP 1 rows has to tell apart.`;
}
