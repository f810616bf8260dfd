import type { Catalog } from '../catalog/index.js';
import { kvBytesPerToken, releaseProfile, type Hardware, type ModelSpec, type ProfileParam, type SimProfile, type Workload } from '../domain/index.js';
import type { AicAttentionRow } from './aic-kernels.js';
import { makeStepModel, priceDecodeMs, resolveConfig, type StepModel } from '../physics/index.js';
import { simulate } from '../sim/index.js';

/**
 * The long-context decode part of docs/calibration.md: what a decode step of 1–4k-token contexts costs
 * on an H100 under the fitted profile (the KV read against the weights), and the one open-loop run of
 * issue 28 that exposed it, simulated (its measured figures are in a check the project does not see;
 * the issue gives the server's TTFT, about 50 ms, and real decode steps about 1.54× faster than the
 * simulator's of then at ~1,700-token contexts).
 */

const CONTEXTS = [1024, 2048, 4096] as const;
const BATCHES = [32, 64, 128] as const;

/** The open-loop run: Llama-3.1-8B on one H100, 1,035-token prompts, 1,448-token answers, Poisson 4 req/s. */
export const LONG_ANSWER_RUN = {
  gpu: 'H100-SXM',
  model: 'llama-3.1-8b',
  vllmVersion: '0.15.1',
  config: { max_num_seqs: 128, enable_prefix_caching: true, enable_chunked_prefill: true },
  workload: {
    name: 'issue-28-long-answers',
    api: 'completions',
    input_len: { dist: 'fixed', value: 1035 },
    output_len: { dist: 'fixed', value: 1448 },
    arrival: { kind: 'poisson', rate_rps: 4 },
    num_prompts: 600,
    ignore_eos: true,
  } satisfies Workload,
} as const;

export interface KernelCheckRow {
  readonly batch: number;
  readonly contextTokens: number;
  readonly kernelMs: number;
  /** What the fitted profile charges (the fit set's vLLM 0.10–0.12), and the same under vLLM ≥ 0.14's `sim_recent`. */
  readonly profileMs: number;
  readonly recentMs: number;
}

/** What a decode step of `batch` requests pays for `contextTokens` of context each: the step at that context less the step at none. */
function contextMs(m: StepModel, batch: number, contextTokens: number): number {
  return priceDecodeMs(m, batch, contextTokens) - priceDecodeMs(m, batch, 0);
}

const decodeModel = (hw: Hardware, model: ModelSpec, profile: SimProfile): StepModel => makeStepModel(resolveConfig({ max_num_seqs: 256 }, hw, model), hw, model, profile);

/**
 * What the profile charges one layer of a decode step for its context (the step model's own price, per
 * layer) against the decode-attention kernel alone (aiconfigurator's FlashAttention 3 times on the H100
 * under vLLM 0.24.0, data/calibration/aiconfigurator-kernels/), for the model's heads at batches of 64
 * and more and 1–4k-token contexts.
 */
export function kernelCheckRows(attention: readonly AicAttentionRow[], profile: SimProfile, hw: Hardware, model: ModelSpec, recent?: Partial<Record<ProfileParam, number | undefined>>): KernelCheckRow[] {
  const m = decodeModel(hw, model, profile);
  const mr = decodeModel(hw, model, releaseProfile(profile, { sim_recent: recent }, LONG_ANSWER_RUN.vllmVersion));
  return attention
    .filter((a) => a.gpu === hw.id && a.version === '0.24.0' && a.kvDtype === 'bf16' && a.qHeads === model.num_attention_heads && a.kvHeads === model.num_kv_heads && a.headDim === model.head_dim && a.batch >= 64 && a.contextTokens >= 1024 && a.contextTokens <= 4096)
    .map((a) => ({ batch: a.batch, contextTokens: a.contextTokens, kernelMs: a.ms, profileMs: contextMs(m, a.batch, a.contextTokens) / model.layers, recentMs: contextMs(mr, a.batch, a.contextTokens) / model.layers }))
    .sort((x, y) => x.batch - y.batch || x.contextTokens - y.contextTokens);
}

const span = (xs: readonly number[]): string => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;

function kernelCheck(rows: readonly KernelCheckRow[]): string {
  const ratios = rows.map((r) => r.profileMs / r.kernelMs);
  const recent = rows.map((r) => r.recentMs / r.kernelMs);
  const summary = ratios.length === 0 ? 'no kernel rows of these heads' : `the profile charges ${span(ratios)} what the kernel takes alone, and ${span(recent)} under \`sim_recent\``;
  return [
    '| batch | context | FlashAttention 3 alone, ms per layer (launch included) | profile, ms per layer (what the context adds to a step) | profile ÷ kernel | vLLM ≥ 0.14 (`sim_recent`) ÷ kernel |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.batch} | ${r.contextTokens.toLocaleString('en-US')} | ${r.kernelMs.toFixed(3)} | ${r.profileMs.toFixed(3)} | ${(r.profileMs / r.kernelMs).toFixed(2)} | ${(r.recentMs / r.kernelMs).toFixed(2)} |`),
    '',
    `Over these rows ${summary}: least at 1k-token contexts and batch 64 (0.27 GB per call, where the kernel's launch and fill weigh most; the step model counts launches per layer apart), more at longer contexts.`,
  ].join('\n');
}

/** The issue's run at `prompts` requests under `profile`: its mean TTFT and ITL, or how it saturated. */
function runLine(catalog: Catalog, profile: SimProfile, prompts: number): string {
  const r = LONG_ANSWER_RUN;
  const out = simulate({ config: r.config, hardware: { gpu: r.gpu, count: 1 }, model: r.model, workload: { ...r.workload, num_prompts: prompts }, seed: 1, catalog, profile, runtimeFailures: false });
  if (!out.ok) return 'did not start';
  const run = out.result;
  const sat = run.saturation ?? null;
  return `mean TTFT ${run.mean_ttft_ms.toFixed(0)} ms (p99 ${run.p99_ttft_ms.toFixed(0)}), mean ITL ${run.mean_itl_ms.toFixed(1)} ms, ${sat?.saturated === true ? `saturated (sustains ${sat.sustained_rps.toFixed(2)} of ${sat.offered_rps.toFixed(2)} req/s)` : 'not saturated'}`;
}

/**
 * `recent`: the H100's `sim_recent` overrides (decode attention at vLLM ≥ 0.14's kernel rate), which the
 * issue's run (vLLM 0.15.1) is priced with; the fitted profile alone stands for the fit set's releases.
 */
export function longContextSection(catalog: Catalog, profile: SimProfile, attention: readonly AicAttentionRow[] = [], recent?: Partial<Record<ProfileParam, number | undefined>>): string {
  const hw = catalog.gpu(LONG_ANSWER_RUN.gpu);
  const model = catalog.model(LONG_ANSWER_RUN.model);
  const m = decodeModel(hw, model, profile);
  const kvBytes = kvBytesPerToken(model, 2);
  const rows = BATCHES.map((b) => {
    const base = priceDecodeMs(m, b, 0);
    const cells = CONTEXTS.map((c) => {
      const ms = priceDecodeMs(m, b, c);
      // The KV share of the step as a read rate: the batch's KV bytes over what the context added.
      const rate = (b * c * kvBytes) / (contextMs(m, b, c) / 1000) / 1e12;
      return `${ms.toFixed(1)} ms (KV at ${rate.toFixed(2)} TB/s)`;
    });
    return `| ${b} | ${base.toFixed(1)} ms | ${cells.join(' | ')} |`;
  });
  const recentProfile = releaseProfile(profile, { sim_recent: recent }, LONG_ANSWER_RUN.vllmVersion);
  const n = LONG_ANSWER_RUN.workload.num_prompts;
  const pricings: readonly [string, SimProfile][] = [
    ["the fitted profile (vLLM 0.10–0.12's decode)", profile],
    [`vLLM ${LONG_ANSWER_RUN.vllmVersion}: \`sim_recent\` (eta_kv ${recentProfile.eta_kv})`, recentProfile],
  ];
  const runs = pricings.flatMap(([label, p]) => [n, 4 * n].map((k) => `| ${label} | ${k.toLocaleString('en-US')} | ${runLine(catalog, p, k)} |`));
  return `Decode steps of ${model.id} on one ${hw.id} (bf16 weights and KV cache, full CUDA graphs) under the fitted profile,
by batch and context per request; the rate is the batch's KV bytes over the time the context adds to the step:

| batch | no context | ${CONTEXTS.map((c) => `${c.toLocaleString('en-US')}-token contexts`).join(' | ')} |
| --- | --- | ${CONTEXTS.map(() => '---').join(' | ')} |
${rows.join('\n')}

Issue 28's long-answer run (${model.id} on one ${hw.id} under vLLM ${LONG_ANSWER_RUN.vllmVersion}, 1,035-token prompts, 1,448-token answers,
Poisson 4 req/s, max_num_seqs 128, chunked prefill and prefix caching; seed 1), at ${n} requests and at ${(4 * n).toLocaleString('en-US')} (the issue's run
lasted 10–20 minutes a stage, 2,400 or more):

| decode priced as | requests | simulated |
| --- | --- | --- |
${runs.join('\n')}

The server measured a TTFT of about 50 ms. The profile before 2026-12-05 simulated 10.4 s on the 600 requests
(75 s on the issue's longer run), its queue never draining.

The same KV read against the kernel that does it: aiconfigurator's decode-attention times of FlashAttention 3 on
the H100 (vLLM 0.24.0, one layer of ${model.id}'s heads timed alone, \`data/calibration/aiconfigurator-kernels/\`)
and what the profile charges a layer for the context (the table above, per layer):

${kernelCheck(kernelCheckRows(attention, profile, hw, model, recent))}

The fit set's long-context rows ask for the extra (measured 2026-12-06 with the profile of then): with \`eta_kv\` at the kernel's 0.95 their TPOT error grows
(Qwen3-32B 4096 → 1024 from 4.5% to 6.3%, Llama-3.1-70B 1024 → 8192 from 4.1% to 6.4%), the whole fit set's
from 5.9% to 6.3%, while this run's ITL falls from 18.6 to 14.2 ms. So the end-to-end rows of vLLM 0.10–0.12
hold costs that grow with the context beyond the kernel's own read, and the fitted value stays for those releases.
The fit set's one recent release points the other way: its gpt-oss-120b rows (vLLM 0.18.0) fit better with the
kernels' rate (TPOT MAPE 11.2% → 10.4%, the "Mixture of experts" table, which prices them so). Hence
\`sim_recent\` (\`src/domain/vllm-release.ts\`): a run of vLLM 0.14 or later, or of no stated release, reads the KV
cache at the rate that release's kernels measure, and the fit set's and ML.ENERGY's rows, priced for the
releases they ran, are unchanged by it.`;
}
