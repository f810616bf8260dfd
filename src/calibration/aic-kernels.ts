import type { Hardware } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { parseCsv, positiveField, type CsvRecord } from './csv.js';
import { grid1, grid2, mape, meanAbsLog, steps } from './grid-search.js';
import { gemmKernelMs } from './vidur-kernels.js';

/**
 * Per-GPU kernel efficiencies from aiconfigurator's per-operator databases
 * (data/calibration/aiconfigurator-kernels/): vLLM's own GEMM kernels (bf16 and per-tensor fp8) and its
 * default decode-attention backend on each GPU, timed alone by shape. Two things Vidur's times
 * (vidur-kernels.ts) cannot give: GPUs beyond Ampere and Hopper (L40S, B200), and the decode attention
 * kernel itself, by batch and context, with a bf16 and an fp8 KV cache.
 *
 * GEMMs are priced as a step prices them (`kernelSeconds` of weight and activation bytes at
 * `eta_weights` of the HBM bandwidth against FLOPs at an MFU of the dtype's peak). Decode attention is
 * priced as reading the batch's KV cache at `eta_kv` of the bandwidth plus a fixed launch cost per kernel,
 * fitted per GPU; its FLOPs (a few per byte) never bind. The ratios to the H100 of the same vLLM version
 * are what carry over to the serving profile (gpu-profiles.ts).
 */

export interface AicGemmRow {
  readonly gpu: string;
  readonly version: string;
  readonly dtype: 'bf16' | 'fp8';
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly ms: number;
}

export interface AicAttentionRow {
  readonly gpu: string;
  readonly version: string;
  readonly kvDtype: 'bf16' | 'fp8';
  readonly batch: number;
  readonly contextTokens: number;
  readonly qHeads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly ms: number;
}

function dtypeField(r: CsvRecord, file: string, k: string): 'bf16' | 'fp8' {
  const v = r.fields[k];
  if (v === 'bfloat16') return 'bf16';
  if (v === 'fp8') return 'fp8';
  throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${k} must be bfloat16 or fp8, got "${v ?? ''}"`, { details: { file, line: r.line, field: k } });
}

export function parseAicGemms(text: string, file: string): AicGemmRow[] {
  return parseCsv(text, file).records.map((r) => ({
    gpu: r.fields['gpu'] ?? '',
    version: r.fields['vllm_version'] ?? '',
    dtype: dtypeField(r, file, 'dtype'),
    m: positiveField(r, file, 'm'),
    n: positiveField(r, file, 'n'),
    k: positiveField(r, file, 'k'),
    ms: positiveField(r, file, 'latency_ms'),
  }));
}

export function parseAicAttention(text: string, file: string): AicAttentionRow[] {
  return parseCsv(text, file).records.map((r) => ({
    gpu: r.fields['gpu'] ?? '',
    version: r.fields['vllm_version'] ?? '',
    kvDtype: dtypeField(r, file, 'kv_cache_dtype'),
    batch: positiveField(r, file, 'batch_size'),
    contextTokens: positiveField(r, file, 'context_tokens'),
    qHeads: positiveField(r, file, 'num_heads'),
    kvHeads: positiveField(r, file, 'num_kv_heads'),
    headDim: positiveField(r, file, 'head_dim'),
    ms: positiveField(r, file, 'latency_ms'),
  }));
}

/** Predicted ms of one GEMM (`m` tokens through an n × k weight of `dtype`) at the given efficiencies. */
export function aicGemmMs(g: Pick<AicGemmRow, 'm' | 'n' | 'k' | 'dtype'>, hw: Hardware, eta: number, mfu: number, floorUs: number): number {
  return gemmKernelMs({ params: g.n * g.k, width: g.n + g.k, tokens: g.m, dtype: g.dtype }, hw, { eta, mfu }, floorUs);
}

/** KV bytes one decode-attention call reads: every request's context, K and V, at the cache's dtype. */
export function attentionBytes(a: Pick<AicAttentionRow, 'batch' | 'contextTokens' | 'kvHeads' | 'headDim' | 'kvDtype'>): number {
  return a.batch * a.contextTokens * a.kvHeads * a.headDim * 2 * (a.kvDtype === 'fp8' ? 1 : 2);
}

export function aicAttentionMs(a: AicAttentionRow, hw: Hardware, eta: number, launchUs: number): number {
  return launchUs / 1000 + (attentionBytes(a) / (hw.hbm_bandwidth_gbs * 1e9 * eta)) * 1000;
}

/**
 * The fit reads only kernels long enough that the launch is a small part of them: GEMMs whose weights
 * are at least 32 MiB (a 7–8B model's smallest projection; the tables' GEMM rates rise with size up to
 * the largest shape and never pass the datasheet, so their operands were not left in L2), and decode
 * attention calls that read at least 128 MiB of KV, more than any of these GPUs' L2 (50 MB on H100, 96 MB
 * on L40S, 126 MB on B200): the attention rows below it are cache-hot (the L40S reads 67 MB of KV at up
 * to twice its DRAM bandwidth). Real decode steps read far more than L2 per layer once a batch holds a
 * few thousand tokens of context.
 */
export const GEMM_MIN_BYTES = 32 * 2 ** 20;
/** GEMMs of at most this many tokens are weight-bound (a decode batch); of at least `PREFILL_MIN_TOKENS`, compute-bound (a prefill chunk). */
export const DECODE_MAX_TOKENS = 32;
export const PREFILL_MIN_TOKENS = 2048;
export const ATTENTION_MIN_BYTES = 2 ** 27;
export const isStreamedGemm = (g: Pick<AicGemmRow, 'n' | 'k' | 'dtype'>): boolean => g.n * g.k * (g.dtype === 'fp8' ? 1 : 2) >= GEMM_MIN_BYTES;
export const isStreamedAttention = (a: Pick<AicAttentionRow, 'batch' | 'contextTokens' | 'kvHeads' | 'headDim' | 'kvDtype'>): boolean => attentionBytes(a) >= ATTENTION_MIN_BYTES;

/** A fit needs rows: an empty subset would leave the grid's first value standing as if fitted. */
function needRows<T>(rows: readonly T[], what: string, gpu: string): readonly T[] {
  if (rows.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `aiconfigurator's kernel data has no ${what} rows for ${gpu} to fit`, { details: { gpu } });
  return rows;
}

export interface AicKernelFit {
  readonly gpu: string;
  readonly version: string;
  readonly gemms: number;
  readonly eta_weights: number;
  readonly mfu_bf16: number;
  /** Per-tensor fp8 GEMMs' MFU of the fp8 peak (null where the data has none: Ampere has no fp8). */
  readonly mfu_fp8: number | null;
  readonly gemmMape: number;
  /** bf16-cache rows fitted, and their MAPE (the fp8 rows set only `fp8KvEfficiency`). */
  readonly attentionRows: number;
  readonly eta_kv: number;
  readonly attentionLaunchUs: number;
  readonly attentionMape: number;
  /**
   * The fp8 cache's bandwidth efficiency over the bf16 one's (fp8 reads half the bytes; 1 would halve
   * the time): null where the data has no fp8 KV rows.
   */
  readonly fp8KvEfficiency: number | null;
}

/** Fits one GPU's rows of one vLLM version. */
export function fitAicKernels(gemms: readonly AicGemmRow[], attention: readonly AicAttentionRow[], hw: Hardware, floorUs: number): Omit<AicKernelFit, 'gpu' | 'version'> {
  const streamed = gemms.filter(isStreamedGemm);
  const bf16 = streamed.filter((g) => g.dtype === 'bf16');
  const fp8 = streamed.filter((g) => g.dtype === 'fp8');
  const pairs = (rows: readonly AicGemmRow[], eta: number, mfuBf16: number, mfuFp8: number): [number, number][] =>
    rows.map((g) => [aicGemmMs(g, hw, eta, g.dtype === 'fp8' ? mfuFp8 : mfuBf16, floorUs), g.ms]);
  // Each efficiency from the regime it governs: streaming from decode-sized GEMMs, the MFUs from
  // prefill-sized ones (the profile's MFUs are fitted on prefill, its streaming on decode). A joint fit
  // over every size lets the middle sizes, where neither bound holds, pull both.
  const decodeSized = needRows(bf16.filter((g) => g.m <= DECODE_MAX_TOKENS), 'decode-sized bf16 GEMM', hw.id);
  const prefillBf16 = needRows(bf16.filter((g) => g.m >= PREFILL_MIN_TOKENS), 'prefill-sized bf16 GEMM', hw.id);
  const prefillFp8 = fp8.filter((g) => g.m >= PREFILL_MIN_TOKENS);
  // Streaming first at a middling MFU, then the MFU, then streaming again at the fitted MFU: the
  // decode-sized rows barely depend on it, but the overlap term does a little.
  let eta = grid1(steps(0.3, 1, 0.005), (e) => meanAbsLog(pairs(decodeSized, e, 0.5, 0.5)));
  const mfuBf16 = grid1(steps(0.2, 0.95, 0.005), (m) => meanAbsLog(pairs(prefillBf16, eta, m, m)));
  eta = grid1(steps(0.3, 1, 0.005), (e) => meanAbsLog(pairs(decodeSized, e, mfuBf16, mfuBf16)));
  const mfuFp8 = prefillFp8.length === 0 ? null : grid1(steps(0.15, 0.95, 0.005), (m) => meanAbsLog(pairs(prefillFp8, eta, mfuBf16, m)));
  const attn = (rows: readonly AicAttentionRow[], e: number, us: number): [number, number][] => rows.map((a) => [aicAttentionMs(a, hw, e, us), a.ms]);
  const timed = attention.filter(isStreamedAttention);
  const kvBf16 = needRows(timed.filter((a) => a.kvDtype === 'bf16'), 'streamed bf16 decode-attention', hw.id);
  const kvFp8 = timed.filter((a) => a.kvDtype === 'fp8');
  const [etaKv, launchUs] = grid2(steps(0.3, 1, 0.005), steps(0, 80, 0.5), (e, us) => meanAbsLog(attn(kvBf16, e, us)));
  const etaKvFp8 = kvFp8.length === 0 ? null : grid1(steps(0.2, 1, 0.005), (e) => meanAbsLog(attn(kvFp8, e, launchUs)));
  return {
    gemms: streamed.length,
    eta_weights: eta,
    mfu_bf16: mfuBf16,
    mfu_fp8: mfuFp8,
    gemmMape: mape(pairs(streamed, eta, mfuBf16, mfuFp8 ?? mfuBf16)),
    attentionRows: kvBf16.length,
    eta_kv: etaKv,
    attentionLaunchUs: launchUs,
    attentionMape: mape(attn(kvBf16, etaKv, launchUs)),
    fp8KvEfficiency: etaKvFp8 === null ? null : Number((etaKvFp8 / etaKv).toFixed(3)),
  };
}

/** Every (GPU, vLLM version) of the data fitted alone; `gpuOf` resolves the data's GPU ids to the catalog. */
export function fitAllAicKernels(gemms: readonly AicGemmRow[], attention: readonly AicAttentionRow[], gpuOf: (id: string) => Hardware, floorUs: number): AicKernelFit[] {
  const keys = [...new Set([...gemms, ...attention].map((g) => `${g.gpu}\u0000${g.version}`))];
  return keys.map((key) => {
    const [gpu, version] = key.split('\u0000') as [string, string];
    const fit = fitAicKernels(
      gemms.filter((g) => g.gpu === gpu && g.version === version),
      attention.filter((a) => a.gpu === gpu && a.version === version),
      gpuOf(gpu),
      floorUs,
    );
    return { gpu, version, ...fit };
  });
}
