import type { Catalog } from '../catalog/index.js';
import { kvBytesPerToken, type Hardware, type ModelSpec, type SimProfile, type Workload } from '../domain/index.js';
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
  readonly profileMs: number;
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
export function kernelCheckRows(attention: readonly AicAttentionRow[], profile: SimProfile, hw: Hardware, model: ModelSpec): KernelCheckRow[] {
  const m = decodeModel(hw, model, profile);
  return attention
    .filter((a) => a.gpu === hw.id && a.version === '0.24.0' && a.kvDtype === 'bf16' && a.qHeads === model.num_attention_heads && a.kvHeads === model.num_kv_heads && a.headDim === model.head_dim && a.batch >= 64 && a.contextTokens >= 1024 && a.contextTokens <= 4096)
    .map((a) => ({ batch: a.batch, contextTokens: a.contextTokens, kernelMs: a.ms, profileMs: contextMs(m, a.batch, a.contextTokens) / model.layers }))
    .sort((x, y) => x.batch - y.batch || x.contextTokens - y.contextTokens);
}

function kernelCheck(rows: readonly KernelCheckRow[]): string {
  const ratios = rows.map((r) => r.profileMs / r.kernelMs);
  const summary = ratios.length === 0 ? 'no kernel rows of these heads' : `the profile charges ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}× what the kernel takes alone`;
  return [
    '| batch | context | FlashAttention 3 alone, ms per layer (launch included) | profile, ms per layer (what the context adds to a step) | profile ÷ kernel |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.batch} | ${r.contextTokens.toLocaleString('en-US')} | ${r.kernelMs.toFixed(3)} | ${r.profileMs.toFixed(3)} | ${(r.profileMs / r.kernelMs).toFixed(2)} |`),
    '',
    `Over these rows ${summary}: least at 1k-token contexts and batch 64 (0.27 GB per call, where the kernel's launch and fill weigh most), more at longer contexts.`,
  ].join('\n');
}

export function longContextSection(catalog: Catalog, profile: SimProfile, attention: readonly AicAttentionRow[] = []): string {
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
  const out = simulate({ config: LONG_ANSWER_RUN.config, hardware: { gpu: hw.id, count: 1 }, model: model.id, workload: LONG_ANSWER_RUN.workload, seed: 1, catalog, profile, runtimeFailures: false });
  const run = out.ok ? out.result : null;
  const sat = run?.saturation ?? null;
  const runLine =
    run === null
      ? 'the run did not start'
      : `mean TTFT ${run.mean_ttft_ms.toFixed(0)} ms, mean ITL ${run.mean_itl_ms.toFixed(1)} ms, ${sat?.saturated === true ? `saturated (sustains ${sat.sustained_rps.toFixed(2)} of ${sat.offered_rps.toFixed(2)} req/s)` : 'not saturated'}`;
  return `Decode steps of ${model.id} on one ${hw.id} (bf16 weights and KV cache, full CUDA graphs) under this profile,
by batch and context per request; the rate is the batch's KV bytes over the time the context adds to the step:

| batch | no context | ${CONTEXTS.map((c) => `${c.toLocaleString('en-US')}-token contexts`).join(' | ')} |
| --- | --- | ${CONTEXTS.map(() => '---').join(' | ')} |
${rows.join('\n')}

Issue 28's long-answer run (${model.id} on one ${hw.id}, 1,035-token prompts, 1,448-token answers, Poisson
4 req/s, max_num_seqs 128, chunked prefill and prefix caching; ${LONG_ANSWER_RUN.workload.num_prompts} requests, seed 1):
${runLine}. The server measured a TTFT of about 50 ms; the profile before this change simulated 10.4 s on
these 600 requests (75 s on the issue's longer run), its queue never draining.

The same KV read against the kernel that does it: aiconfigurator's decode-attention times of FlashAttention 3 on
the H100 (vLLM 0.24.0, one layer of ${model.id}'s heads timed alone, \`data/calibration/aiconfigurator-kernels/\`)
and what the profile charges a layer for the context (the table above, per layer):

${kernelCheck(kernelCheckRows(attention, profile, hw, model))}

The fit set's long-context rows ask for the extra (measured 2026-12-06 with the profile of then): with \`eta_kv\` at the kernel's 0.95 their TPOT error grows
(Qwen3-32B 4096 → 1024 from 4.5% to 6.3%, Llama-3.1-70B 1024 → 8192 from 4.1% to 6.4%), the whole fit set's
from 5.9% to 6.3%, while this run's ITL falls from 18.6 to 14.2 ms. So the end-to-end rows (vLLM 0.10–0.12)
hold costs that grow with the context beyond the kernel's own read, and we keep the fitted value; whether
vLLM 0.15.1 still pays them is what the issue's held-out runs would tell.`;
}
