import { gpuKernelTable, type GpuProfileFit } from './gpu-profiles.js';
import { pct, signedPct } from './report-format.js';
import type { LibA100Scores } from './gpu-ratio-check.js';

/** The "Profiles beyond Hopper" part of docs/calibration.md. */
export interface GpuProfilesReport {
  readonly fit: GpuProfileFit;
  /** GPUs whose data/hardware.yaml overrides differ from this fit (a `--report` run after the data changed). */
  readonly stale: readonly string[];
  /** LLM-Inference-Bench's A100-40GB ÷ H100 latency ratios, with the datasheet alone and with the overrides. */
  readonly lib: LibA100Scores;
}


export function gpuProfilesSection(r: GpuProfilesReport): string {
  const cell = (v: number | undefined): string => (v === undefined ? '–' : String(v));
  const overrides = Object.entries(r.fit.overrides)
    .map(([gpu, o]) => `| ${gpu} | ${cell(o.eta_weights)} | ${cell(o.eta_kv)} | ${cell(o.kv_fp8_efficiency)} | ${cell(o.mfu_bf16)} | ${cell(o.mfu_fp8)} | ${cell(o.layer_fixed_us)} | ${r.fit.basis[gpu] ?? ''} |`)
    .join('\n');
  const libLine = (label: string, s: LibA100Scores['fitted']): string =>
    `| ${label} | ${s.whole.pairs} | ${pct(s.whole.mape)} (${signedPct(s.whole.signed)}) | ${s.marginal.pairs} | ${pct(s.marginal.mape)} (${signedPct(s.marginal.signed)}) |`;
  const b200 = r.fit.aicGpus.find((g) => g.fit.gpu === 'B200');
  return `Every GPU is priced from its datasheet (\`data/hardware.yaml\`) with the profile fitted on H100 runs, and
a GPU's \`sim:\` entry overrides the efficiencies its kernels reach differently. Those entries are fitted
here on per-operator kernel times, as ratios to the H100's: the H100's serving profile is fitted end to
end, where these kernels are a part of each step, so what carries to another GPU is how much more or less
of its own datasheet its kernels reach.

**aiconfigurator's kernel tables** (\`data/calibration/aiconfigurator-kernels/\`, ai-dynamo/aiconfigurator
095f58a, Apache-2.0): vLLM's own GEMMs (bf16 and per-tensor fp8) and its default decode-attention backend
timed alone by shape, under vLLM 0.14.0 (H100, A100) and 0.24.0 (H100, L40S, B200). Each GPU's GEMMs are
priced with the step-time model's kernel formula (\`kernelSeconds\`) and fitted with a streaming efficiency
(on GEMMs of at most 32 tokens, a decode batch), a bf16 MFU and an fp8 MFU (on GEMMs of at least 2,048
tokens, a prefill chunk: the profile's MFUs are fitted on prefill); its decode attention as reading the batch's KV cache at a
fitted share of the bandwidth plus a launch cost, for a bf16 cache and, separately, an fp8 one. Only kernels
that stream at least 32 MiB (GEMM weights) or 128 MiB (KV) are fitted: more than any of these GPUs' L2,
which a kernel timed in a loop would otherwise find its operand in (the L40S reads 67 MB of KV at up to
twice its DRAM bandwidth), and long enough that the launch is a small part. Every GPU is compared with the
H100 of its own vLLM version. These tables are microbenchmarks, not aiconfigurator's end-to-end silicon
rows, whose H200, B200 and B300 rows no fit reads.

| GPU | vLLM | GEMMs | streaming efficiency | bf16 MFU | fp8 MFU | GEMM MAPE, own fit | GEMM MAPE, H100 efficiencies (leave the GPU out) | attention rows | KV read efficiency | fp8 KV ÷ bf16 rate | attention MAPE, own fit | attention MAPE, H100 efficiency (leave the GPU out) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${r.fit.aic
  .map((f) => {
    const g = r.fit.aicGpus.find((x) => x.fit === f);
    return `| ${f.gpu} | ${f.version} | ${f.gemms} | ${f.eta_weights} | ${f.mfu_bf16} | ${cell(f.mfu_fp8 ?? undefined)} | ${pct(f.gemmMape)} | ${g === undefined ? '–' : pct(g.gemmMapeRefEff)} | ${f.attentionRows} | ${f.eta_kv} | ${cell(f.fp8KvEfficiency ?? undefined)} | ${pct(f.attentionMape)} | ${g === undefined ? '–' : pct(g.attentionMapeRefEff)} |`;
  })
  .join('\n')}

What the tables say beyond the ratios: decode attention reads the KV cache at 0.95–0.98 of the datasheet
bandwidth on the H100 and the B200 but about 0.76–0.81 on the L40S and the A100; the B200's GEMMs reach a
smaller share of their (much larger) peaks than the H100's (streaming ${b200 === undefined ? '–' : `${b200.fit.eta_weights} against ${b200.ref.eta_weights}`}, fp8 MFU ${b200 === undefined ? '–' : `${b200.fit.mfu_fp8 ?? '–'} against ${b200.ref.mfu_fp8 ?? '–'}`}: per-tensor fp8 GEMMs
at prefill sizes run about 1.3× the bf16 ones there, 1.4× on the H100), and an fp8 KV cache decodes at the bf16 byte rate on the
B200 and the L40S but at 0.81–0.87 of it on the H100 under vLLM 0.14–0.24. The profile's
\`kv_fp8_efficiency\` of 0.5 is the fit set's H100 decode under vLLM 0.10.2 (FlashAttention 3's fp8 path before
vllm-project/flash-attention PR #96); the other architectures never ran that path, so they take their own
measured factor rather than a ratio to it. An H100 on a recent vLLM with an fp8 cache is therefore priced
slower per context token than its kernels now run; we keep the fit set's value until end-to-end rows of a
recent vLLM with an fp8 cache say otherwise.

**MoE kernels** (\`moe.csv\` of the same tables, vLLM 0.24.0, balanced routing, TP 1–8 and EP 2–8, 1–8,192
tokens): gpt-oss's MXFP4 experts (OpenAI's Triton kernels on the H100, FlashInfer's TRT-LLM MXFP4 × bf16
ones on the B200) and Qwen3-30B-A3B's bf16 experts, each row priced by the step-time model's own MoE layer
under the GPU's profile with its dense overrides in place, and \`moe_efficiency\` (compute) and
\`moe_weight_efficiency\` (expert weight streaming) fitted per GPU and expert format; the values are
relative to that GPU's dense efficiencies, so they may pass 1. Leave one model out: gpt-oss-120b predicted
by the fit on gpt-oss-20b and back.

| GPU | experts | rows | moe_efficiency (kernel) | moe_weight_efficiency (kernel) | MAPE, own fit | leave one model out |
| --- | --- | --- | --- | --- | --- | --- |
${r.fit.moe.map((m) => `| ${m.gpu} | ${m.dtype} | ${m.rows} | ${m.fit.moe_efficiency} | ${m.fit.moe_weight_efficiency} | ${pct(m.mape)} | ${m.lomo.map((l) => `${l.model} ${pct(l.mape)}`).join('; ') || '–'} |`).join('\n')}

The profile's MoE efficiencies were fitted end to end on gpt-oss-120b on the H100, so the MXFP4 family's
B200 ÷ H100 ratio is what the B200's override takes: its MXFP4 × bf16 kernels compute at about half the
share of their (bf16-rate) peak that the H100's Triton ones reach (at 8,192 tokens they take as long as the
H100's), while streaming the touched experts' weights a little better (capped at the profile's 1). The bf16
family runs the other way (the B200's TRT-LLM bf16 experts reach more of their peak than the H100's Triton
ones), and one MoE efficiency per GPU cannot carry both: a bf16-expert model on the B200 is priced with the
MXFP4 family's ratio, slower than these kernels say. The MoE model's shape error (30% on the H100's own
rows, 44% held out) is larger than the dense kernels' because it prices the touched experts under uniform
routing with one efficiency pair over 1–8,192 tokens; the ratio between GPUs is steadier than either fit.

The MoE layer as a serving run prices it (the profile's end-to-end efficiencies with each GPU's overrides)
against the same kernels on one GPU, simulated ÷ kernel time by tokens (a decode step of 1–256 requests; a
prefill chunk of 1,024 or 8,192 tokens):

${moeShapeTable(r.fit)}

Below 64 tokens the kernel's balanced routing touches more experts than the simulator's uniform routing,
and the kernel's fixed cost is larger than the simulator's. From 1,024 tokens on, the simulated layer takes several times
the kernel's time: the profile's \`moe_efficiency\` was fitted end to end on gpt-oss-120b under vLLM
0.11–0.18 on the H100 (Marlin MXFP4 in InferenceX's scripts), and the bf16 experts inherit it. A trial
(2026-12-07) that gave bf16 experts the kernels' compute rate (\`moe_efficiency\` 0.79 on the H100, 0.85
on the B200, where an 8,192-token layer takes the kernel's time) made the held-out ML.ENERGY Qwen3-30B-A3B rows
(vLLM 0.11.1) worse: output throughput MAPE 25.3% → 31.8% on the H100 and 18.9% → 46.2% on the B200, the
simulated ITL at 512–1,478 running requests falling 40–52% under the measured one. Those rows are held out
and decide nothing here, but they are the only end-to-end bf16-expert runs this repository has, so the
profile's rate stays; prefill-heavy MoE traffic is where the simulator is least sure.

**Vidur's per-operator times** (\`data/calibration/vidur/\`, microsoft/vidur 7d47513: bf16 GEMMs of Llama
layers at 1–4,096 tokens and TP 1–8 on an 80 GB A100 and an H100, with the small kernels around them, from
2024's vLLM): the A100's small kernels per layer (norms, rotary, SiLU, residual, averaged at decode sizes)
set its \`layer_fixed_us\`, and its GEMMs are a second, older opinion on the A100, per model:

${gpuKernelTable(r.fit)}

Where both sources measure a thing, the newer vLLM's kernels (aiconfigurator's) set the override. GPUs
without kernel data take the overrides of one with the same kernels: the 40 GB A100 (HBM2 at 1,555 GB/s
against the 80 GB's HBM2e at 2,039) the 80 GB's, and the L4 (a smaller Ada with GDDR6, like the L40S) the
L40S's; neither is measured. The H100 PCIe and the H200 are Hoppers and take the profile as fitted.

${r.stale.length > 0 ? `What a fit run writes to \`data/hardware.yaml\` (the profile's value × the ratio, inside \`PROFILE_BOUNDS\`); **the file's entries differ for ${r.stale.join(', ')}**, and the figures on this page were simulated with the file's` : `Written to \`data/hardware.yaml\` (the profile's value × the ratio, inside \`PROFILE_BOUNDS\`)`}:

| GPU | eta_weights | eta_kv | kv_fp8_efficiency | mfu_bf16 | mfu_fp8 | layer_fixed_us | from |
| --- | --- | --- | --- | --- | --- | --- | --- |
${overrides}

"Leave the GPU out" prices a GPU's kernels with the H100's efficiencies at its own datasheet, which is what
the datasheet alone did before these overrides; the gap between that column and the own-fit column is what
the override buys. Vidur's per-model fits move the A100's streaming efficiency with the layer shapes (small
GEMMs of 7–8B models at high TP reach less of the bandwidth), which is its leave-one-model-out error.

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

Not fitted: MI300X (its \`sim:\` entry is the reference's ROCm estimate; aiconfigurator has no AMD tables; it
keeps the profile's \`kv_fp8_efficiency\` of 0.5, which describes Hopper's old fp8 path, for want of its own),
the L4 (above), and every GPU's fixed costs per step and per layer beyond the A100's small kernels (no
source times them apart from the kernels). B200 checks: ML.ENERGY's B200 rows below stay held out (no fit
reads them), as do aiconfigurator's B200 silicon rows.`;
}

/** Simulated ÷ kernel time of one MoE layer per GPU and model, a column per token count. */
function moeShapeTable(fit: GpuProfileFit): string {
  const tokens = [...new Set(fit.moeShape.map((r) => r.tokens))].sort((a, b) => a - b);
  const groups = [...new Set(fit.moeShape.map((r) => `${r.gpu}\u0000${r.model}`))];
  const head = `| GPU | model | ${tokens.map((t) => `${t.toLocaleString('en-US')} token${t === 1 ? '' : 's'}`).join(' | ')} |\n| --- | --- | ${tokens.map(() => '---').join(' | ')} |`;
  const rows = groups.map((g) => {
    const [gpu, model] = g.split('\u0000') as [string, string];
    const cell = (t: number): string => {
      const r = fit.moeShape.find((x) => x.gpu === gpu && x.model === model && x.tokens === t);
      return r === undefined ? '–' : `${(r.simulatedMs / r.kernelMs).toFixed(2)}× (${r.kernelMs.toPrecision(2)} ms)`;
    };
    return `| ${gpu} | ${model} | ${tokens.map(cell).join(' | ')} |`;
  });
  return [head, ...rows].join('\n');
}
