import type { ModelSpec } from '../domain/index.js';
import { invalid, isObject, optPosInt, optSection, optString, posInt, type Section } from './hf-fields.js';

/** A checkpoint's precision as the ModelSpec holds it. */
export interface Precision {
  readonly dtype: ModelSpec['dtype'];
  readonly native_quantization: ModelSpec['native_quantization'];
  readonly quantization_method: ModelSpec['quantization_method'];
  readonly quant_group_size: number | null;
}

const METHODS = ['fp8', 'fbgemm_fp8', 'compressed-tensors', 'awq', 'gptq', 'modelopt', 'mxfp4'] as const;

/**
 * The 16-bit type vLLM computes in (`torch_dtype`, `dtype` in newer transformers). A float32
 * checkpoint (gemma-2-9b-it's config says float32) is served in bf16: vLLM's `dtype=auto` never picks
 * float32 for a GPU (`ModelConfig._resolve_auto_dtype`). Absent: bf16, transformers' usual save type.
 */
function dtypeOf(top: Section, text: Section): ModelSpec['dtype'] {
  for (const s of [text, top]) {
    for (const key of ['torch_dtype', 'dtype']) {
      const v = optString(s, key);
      if (v === null) continue;
      if (v === 'float16') return 'float16';
      if (v === 'bfloat16' || v === 'float32') return 'bfloat16';
      throw invalid(s.at + key, `is "${v}"; expected bfloat16, float16 or float32`, v);
    }
  }
  return 'bfloat16';
}

/**
 * The weight format from `quantization_config` (at the top level, or inside `text_config`), after each
 * quantizer's own config.json layout (vLLM's `*Config.from_config` of each method reads the same keys):
 * - `fp8` (Qwen's and DeepSeek's FP8 repos): e4m3 W8A8, `weight_block_size` [128, 128] or per tensor;
 * - `fbgemm_fp8` (Meta's Llama 3.1 405B FP8): per-channel fp8;
 * - `compressed-tensors` (llm-compressor): `config_groups.*.weights` num_bits/type/group_size;
 * - `awq`, `gptq`: `bits` (4; GPTQ 8-bit is int8) and `group_size` (−1: per channel);
 * - `modelopt` (NVIDIA ModelOpt): `quant_algo` FP8 or NVFP4, top-level or under `quantization`;
 * - `mxfp4` (gpt-oss): experts in MXFP4, the rest bf16.
 */
export function precisionFromHfConfig(top: Section, text: Section): Precision {
  const dtype = dtypeOf(top, text);
  const q = optSection(top, 'quantization_config') ?? optSection(text, 'quantization_config');
  if (q === null) return { dtype, native_quantization: 'none', quantization_method: null, quant_group_size: null };
  // ModelOpt's own layout (hf_quant_config.json) names its producer, not a quant_method; vLLM's
  // `_parse_quant_hf_config` reads it as modelopt.
  const producer = optSection(q, 'producer');
  const method = optString(q, 'quant_method') ?? (producer !== null && optString(producer, 'name') === 'modelopt' ? 'modelopt' : null);
  const field = `${q.at}quant_method`;
  if (method === null) throw invalid(field, 'is missing');
  const m = method.toLowerCase();
  const is = (x: string): x is (typeof METHODS)[number] => (METHODS as readonly string[]).includes(x);
  if (!is(m)) throw invalid(field, `is "${method}", a format lm-bench does not model (it models ${METHODS.join(', ')})`, method);
  const group = (g: number | null) => (g === null || g <= 0 ? null : g);
  switch (m) {
    case 'fp8': {
      const block = q.json['weight_block_size'];
      const n = Array.isArray(block) && typeof block[0] === 'number' ? block[0] : null;
      return { dtype, native_quantization: 'fp8', quantization_method: 'fp8', quant_group_size: group(n) };
    }
    case 'fbgemm_fp8':
      return { dtype, native_quantization: 'fp8', quantization_method: 'fbgemm_fp8', quant_group_size: null };
    case 'mxfp4':
      return { dtype, native_quantization: 'mxfp4', quantization_method: 'mxfp4', quant_group_size: null };
    case 'awq':
    case 'gptq': {
      const bits = posInt(q, q.json['bits'] === undefined ? 'w_bit' : 'bits', 16);
      const g = group(numberOr(q.json['group_size'] ?? q.json['q_group_size'], -1));
      if (bits === 4) return { dtype, native_quantization: m, quantization_method: m, quant_group_size: g };
      if (bits === 8 && m === 'gptq') return { dtype, native_quantization: 'int8', quantization_method: m, quant_group_size: g };
      throw invalid(`${q.at}bits`, `is ${bits}; lm-bench models 4-bit ${m} (and 8-bit GPTQ)`, bits);
    }
    case 'modelopt': {
      const inner = optSection(q, 'quantization') ?? q;
      const algo = optString(inner, 'quant_algo');
      if (algo === 'FP8') return { dtype, native_quantization: 'fp8', quantization_method: 'modelopt', quant_group_size: null };
      if (algo === 'NVFP4') return { dtype, native_quantization: 'fp4', quantization_method: 'modelopt', quant_group_size: group(optPosInt(inner, 'group_size', 16)) };
      throw invalid(`${inner.at}quant_algo`, `is ${JSON.stringify(algo)}; lm-bench models ModelOpt FP8 and NVFP4`, algo);
    }
    case 'compressed-tensors':
      return { dtype, ...compressedTensors(q) };
  }
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' ? v : fallback;
}

/** compressed-tensors: the first config group's weight scheme (llm-compressor writes one group per scheme). */
function compressedTensors(q: Section): Omit<Precision, 'dtype'> {
  const groups = optSection(q, 'config_groups');
  const first = groups === null ? undefined : Object.entries(groups.json)[0];
  if (groups === null || first === undefined || !isObject(first[1])) throw invalid(`${q.at}config_groups`, 'is missing or empty');
  const g: Section = { json: first[1], at: `${groups.at}${first[0]}.` };
  const w = optSection(g, 'weights');
  if (w === null) throw invalid(`${g.at}weights`, 'is missing');
  const bits = posInt(w, 'num_bits', 16);
  const type = optString(w, 'type') ?? 'int';
  const strategy = optString(w, 'strategy');
  const base = { quantization_method: 'compressed-tensors' as const };
  if (bits === 8 && type === 'float') {
    const block = w.json['block_structure'];
    const n = strategy === 'block' && Array.isArray(block) && typeof block[0] === 'number' ? block[0] : null;
    return { ...base, native_quantization: 'fp8', quant_group_size: n };
  }
  if (bits === 8 && type === 'int') return { ...base, native_quantization: 'int8', quant_group_size: null };
  const groupSize = strategy === 'group' || strategy === 'tensor_group' ? optPosInt(w, 'group_size', null) : null;
  if (bits === 4 && type === 'int') return { ...base, native_quantization: 'w4a16', quant_group_size: groupSize };
  if (bits === 4 && type === 'float') return { ...base, native_quantization: 'fp4', quant_group_size: groupSize };
  throw invalid(`${w.at}num_bits`, `is ${bits} (${type}); lm-bench models compressed-tensors fp8, int8 and 4-bit int/float weights`, bits);
}
