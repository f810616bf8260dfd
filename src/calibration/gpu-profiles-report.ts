import { REFERENCE_GPU, gpuKernelTable, type GpuProfileFit } from './gpu-profiles.js';
import type { LibA100Scores } from './gpu-ratio-check.js';

/** The "Profiles beyond Hopper" part of docs/calibration.md. */
export interface GpuProfilesReport {
  readonly fit: GpuProfileFit;
  /** GPUs whose data/hardware.yaml overrides differ from this fit (a `--report` run after the data changed). */
  readonly stale: readonly string[];
  /** LLM-Inference-Bench's A100-40GB ÷ H100 latency ratios, with the datasheet alone and with the overrides. */
  readonly lib: LibA100Scores;
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const signed = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

export function gpuProfilesSection(r: GpuProfilesReport): string {
  const overrides = Object.entries(r.fit.overrides)
    .map(([gpu, o]) => `| ${gpu} | ${o.eta_weights} | ${o.eta_kv} | ${o.mfu_bf16} | ${o.layer_fixed_us} |`)
    .join('\n');
  const libLine = (label: string, s: LibA100Scores['fitted']): string =>
    `| ${label} | ${s.whole.pairs} | ${pct(s.whole.mape)} (${signed(s.whole.signed)}) | ${s.marginal.pairs} | ${pct(s.marginal.mape)} (${signed(s.marginal.signed)}) |`;
  return `Every GPU is priced from its datasheet (\`data/hardware.yaml\`) with the profile fitted on H100 runs, and
a GPU's \`sim:\` entry overrides the efficiencies its kernels reach differently. Those entries for the A100
are fitted here, on Vidur's per-operator kernel times (\`data/calibration/vidur/\`, microsoft/vidur 7d47513:
bf16 GEMMs of Llama layers timed alone at 1–4,096 tokens and TP 1–8 on an 80 GB A100 and an H100). Each
GPU's GEMMs are priced with the step-time model's own kernel formula (\`kernelSeconds\`) and two
efficiencies fitted per GPU, a streaming one (memory-bound GEMMs) and an MFU (compute-bound ones); the small
kernels of a layer (norms, rotary, SiLU, residual) are averaged at decode sizes. The H100's serving profile
is fitted end to end, where these kernels are a part of each step, so what carries over is the ratio:
the A100's \`eta_weights\` and \`eta_kv\` are the profile's times the ratio of streaming efficiencies
(attention reads the KV cache from the same HBM; Vidur's attention times are not in the data), its
\`mfu_bf16\` the profile's times the ratio of MFUs, its \`layer_fixed_us\` the profile's times the ratio of
small-kernel times. The 40 GB A100 (HBM2 at 1,555 GB/s against the 80 GB's HBM2e at 2,039) has the same chip
and takes the same overrides.

${gpuKernelTable(r.fit)}

${r.stale.length > 0 ? `What a fit run writes to \`data/hardware.yaml\` (the profile's value × the ratio, inside \`PROFILE_BOUNDS\`); **the file's entries differ for ${r.stale.join(', ')}**, and the figures on this page were simulated with the file's` : `Written to \`data/hardware.yaml\` (the profile's value × the ratio, inside \`PROFILE_BOUNDS\`)`}:

| GPU | eta_weights | eta_kv | mfu_bf16 | layer_fixed_us |
| --- | --- | --- | --- | --- |
${overrides}

The ${REFERENCE_GPU} row is the reference the ratios are taken against. "Leave the GPU out" prices the A100's
GEMMs with the H100's kernel efficiencies, which is what the datasheet alone did before: the streaming
efficiency the A100 reaches is ${pct(1 - (r.fit.gpus[0]?.fit.eta_weights ?? 0) / r.fit.reference.fit.eta_weights)} lower than the H100's, so
its decode steps (weights and KV read) come out slower by about that, while its compute-bound prefill stays
near the datasheet ratio. The per-model fits move the streaming efficiency with the layer shapes (small
GEMMs of 7–8B models at high TP reach less of the bandwidth), which is the leave-one-model-out error.

End to end, the only A100 and H100 runs of one software stack we have are LLM-Inference-Bench's (vLLM
≈0.4–0.5, Llama-3-8B, batches of 1–64 at 128–2,048 tokens in and out, A100-40GB and H100, TP 1 and 2):
the simulated A100-40GB ÷ H100 latency ratio against the measured one, for whole batches and for what a batch
adds over one request (which cancels the old engine's CPU time per step):

| A100 profile | pairs | whole-batch ratio MAPE (signed) | pairs | marginal ratio MAPE (signed) |
| --- | --- | --- | --- | --- |
${libLine('datasheet only', r.lib.datasheet)}
${libLine('with the kernel-fitted overrides', r.lib.fitted)}

That stack's H100 was closer to its A100 than the datasheets say (its kernels predate FlashAttention 3 and
Hopper-tuned GEMMs), so these pairs are not a target for a V1 engine and were not fitted; they say the
simulator's A100 ÷ H100 gap is wider than that stack's was, and the overrides widen it further, in the
direction of issue 28's open-loop runs on vLLM 0.15.1, where the A100 came out 15–23% too fast.

Not fitted, for want of public data under a known protocol: L40S and L4 (no kernel or serving rows of
either in the sources; they keep the H100 efficiencies at their own datasheet peaks, GDDR6 bandwidth
included), B200 (ML.ENERGY's B200 rows below stay a held-out check, as do aiconfigurator's B200 rows, which
no fit reads; fitting B200 overrides on ML.ENERGY's rows would leave this page no B200 check), MI300X (its
\`sim:\` entry is the reference's ROCm estimate).`;
}
