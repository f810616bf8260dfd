import { assertNever, LmBenchError } from '../errors.js';
import { invalid, isObject, MAX_LAYERS, optArray, optBool, optCount, optPosInt, optSection, optString, posInt, type Json, type Section } from './hf-fields.js';
import { visionParams, type MoeShape, type TextShape } from './hf-params.js';

/**
 * Each supported architecture's reading of config.json into a TextShape. Field names and defaults
 * are those of the transformers config classes (`configuration_*.py`) and vLLM's model code, which
 * is what `vllm serve` reads; where a published config.json omits a field the class default applies
 * (Gemma 3's `text_config` has no vocab_size or max_position_embeddings).
 */
export type Family = 'llama' | 'mistral' | 'qwen2' | 'qwen3' | 'phi3' | 'gemma2' | 'gemma3' | 'mixtral' | 'qwen2_moe' | 'qwen3_moe' | 'gpt_oss' | 'deepseek' | 'llama4';

export const SUPPORTED: { readonly architectures: Readonly<Record<string, Family>>; readonly modelTypes: Readonly<Record<string, Family>> } = {
  architectures: {
    LlamaForCausalLM: 'llama',
    MistralForCausalLM: 'mistral',
    Qwen2ForCausalLM: 'qwen2',
    Qwen3ForCausalLM: 'qwen3',
    Phi3ForCausalLM: 'phi3',
    Gemma2ForCausalLM: 'gemma2',
    Gemma3ForCausalLM: 'gemma3',
    Gemma3ForConditionalGeneration: 'gemma3',
    MixtralForCausalLM: 'mixtral',
    Qwen2MoeForCausalLM: 'qwen2_moe',
    Qwen3MoeForCausalLM: 'qwen3_moe',
    GptOssForCausalLM: 'gpt_oss',
    DeepseekV2ForCausalLM: 'deepseek',
    DeepseekV3ForCausalLM: 'deepseek',
    Llama4ForConditionalGeneration: 'llama4',
    Llama4ForCausalLM: 'llama4',
  },
  modelTypes: {
    llama: 'llama',
    mistral: 'mistral',
    qwen2: 'qwen2',
    qwen3: 'qwen3',
    phi3: 'phi3',
    gemma2: 'gemma2',
    gemma3: 'gemma3',
    gemma3_text: 'gemma3',
    mixtral: 'mixtral',
    qwen2_moe: 'qwen2_moe',
    qwen3_moe: 'qwen3_moe',
    gpt_oss: 'gpt_oss',
    deepseek_v2: 'deepseek',
    deepseek_v3: 'deepseek',
    llama4: 'llama4',
    llama4_text: 'llama4',
  },
};

/** A section with class defaults under it (the file's values win). */
const withDefaults = (s: Section, defaults: Json): Section => ({ json: { ...defaults, ...s.json }, at: s.at });

/**
 * transformers `Gemma3TextConfig` defaults. A nested `text_config` is saved as its difference from the
 * class defaults, so the published gemma-3 configs omit these: gemma-3-4b-it states no heads or head_dim
 * (8, 4 and 256 apply), gemma-3-12b-it no head_dim (256, not hidden_size / heads = 240).
 */
const GEMMA3_TEXT_DEFAULTS: Json = {
  vocab_size: 262208,
  hidden_size: 2304,
  intermediate_size: 9216,
  num_hidden_layers: 26,
  max_position_embeddings: 131072,
  sliding_window_pattern: 6,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  head_dim: 256,
  sliding_window: 4096,
};

/**
 * transformers `Llama4TextConfig` defaults (Scout's shape), which a `text_config` saved as a difference
 * from them (a re-saved or quantized Scout or Maverick) omits; without them an omitted
 * `intermediate_size_mlp` would price Maverick's dense layers at the experts' width and an omitted
 * `attention_chunk_size` would drop chunked attention. A top-level Llama4ForCausalLM config reads the same.
 */
const LLAMA4_TEXT_DEFAULTS: Json = {
  vocab_size: 202048,
  hidden_size: 5120,
  intermediate_size: 8192,
  intermediate_size_mlp: 16384,
  num_hidden_layers: 48,
  num_attention_heads: 40,
  num_key_value_heads: 8,
  head_dim: 128,
  max_position_embeddings: 131072,
  num_experts_per_tok: 1,
  num_local_experts: 16,
  interleave_moe_layer_step: 1,
  no_rope_layer_interval: 4,
  attention_chunk_size: 8192,
};

interface Common {
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
  context: number;
  tied: boolean;
}

/** RoPE types whose max_position_embeddings already counts their scaling (vLLM `_get_and_verify_max_len`). */
const PRESCALED_ROPE = new Set(['llama3', 'longrope', 'su']);

/**
 * The longest context vLLM serves (`_get_and_verify_max_len`): max_position_embeddings, times the
 * `rope_scaling` factor (`rope_parameters` in transformers 5, per layer type or not) unless its type is
 * llama3, longrope or su; YaRN scales its `original_max_position_embeddings` instead (transformers' own
 * fallback when absent: max_position_embeddings). Qwen's model cards have users add YaRN ×4 to
 * config.json for 128K: vLLM then accepts a max_model_len of 131072 where max_position_embeddings says
 * 40960. Gemma 3's is already scaled (vLLM skips it): `scaled` false.
 */
function servedContext(t: Section, maxPos: number, scaled: boolean): number {
  const rope = scaled ? (optSection(t, 'rope_scaling') ?? optSection(t, 'rope_parameters')) : null;
  if (rope === null) return maxPos;
  const single = 'rope_type' in rope.json || 'type' in rope.json;
  // Per layer type ({ full_attention: {...}, sliding_attention: {...} }) when it names no type itself.
  const parts: Section[] = single ? [rope] : Object.entries(rope.json).flatMap(([k, v]) => (isObject(v) ? [{ json: v, at: `${rope.at}${k}.` }] : []));
  let len = maxPos;
  let factor = 1;
  for (const p of parts) {
    const type = optString(p, 'rope_type') ?? optString(p, 'type');
    if (type === null || PRESCALED_ROPE.has(type)) continue;
    const f = p.json['factor'];
    if (f !== undefined && f !== null) {
      if (typeof f !== 'number' || !(f > 0) || f > 1024) throw invalid(`${p.at}factor`, `must be a positive number (at most 1024), got ${JSON.stringify(f)}`, f);
      factor = f;
    }
    if (type === 'yarn') len = optPosInt(p, 'original_max_position_embeddings', maxPos, 1 << 30);
  }
  return Math.floor(len * factor);
}

function common(t: Section, top: Section, tiedDefault: boolean, ropeScaled = true): Common {
  const layers = posInt(t, 'num_hidden_layers', MAX_LAYERS);
  const hidden = posInt(t, 'hidden_size');
  const heads = posInt(t, 'num_attention_heads');
  const kvHeads = optPosInt(t, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) throw invalid(`${t.at}num_key_value_heads`, `(${kvHeads}) must divide num_attention_heads (${heads})`, kvHeads);
  const explicit = optPosInt(t, 'head_dim', null);
  if (explicit === null && hidden % heads !== 0) {
    throw invalid(`${t.at}num_attention_heads`, `(${heads}) must divide hidden_size (${hidden}) when head_dim is absent`, heads);
  }
  const tiedAt = t.json['tie_word_embeddings'] === undefined ? top : t;
  return {
    layers,
    hidden,
    heads,
    kvHeads,
    headDim: explicit ?? hidden / heads,
    vocab: posInt(t, 'vocab_size', 1 << 22),
    context: servedContext(t, posInt(t, 'max_position_embeddings', 1 << 30), ropeScaled),
    tied: optBool(tiedAt, 'tie_word_embeddings', tiedDefault),
  };
}

/**
 * Layers with local attention: counted from `layer_types` when the config lists them (gpt-oss, newer
 * Gemma configs), else by the architecture's rule. A window that covers the context, or that every
 * layer uses (Mistral-7B-v0.1, Phi-3-mini-4k), is modelled as full attention: vLLM then keeps one
 * uniform sliding group, which this memory model does not represent; full attention overstates KV per
 * request past the window, so it errs toward configurations that start.
 */
function sliding(t: Section, layers: number, window: number | null, context: number, isLocal: (i: number) => boolean): { tokens: number; layers: number } | null {
  if (window === null) return null;
  const types = optArray<string>(t, 'layer_types', 'string');
  if (types !== null && types.length !== layers) throw invalid(`${t.at}layer_types`, `lists ${types.length} layers, num_hidden_layers is ${layers}`);
  const n = types === null ? Array.from({ length: layers }, (_, i) => i).filter(isLocal).length : types.filter((x) => x === 'sliding_attention').length;
  return n === 0 || n === layers || window >= context ? null : { tokens: window, layers: n };
}

const noMoe = { mla: null, moe: null, sliding: null, chunked: null, qkvBias: false, oBias: false, qkNorm: false, sinks: false, normsPerLayer: 2 };

export function readLanguageModel(family: Family, top: Section): { shape: TextShape; vision: number } {
  switch (family) {
    case 'llama':
    case 'mistral':
    case 'phi3': {
      // Mistral's and Phi-3's sliding_window, when set, covers every layer: modelled as full (see `sliding`).
      const c = common(top, top, false);
      const bias = family === 'llama' && optBool(top, 'attention_bias', false);
      return { shape: { ...c, ...noMoe, intermediate: posInt(top, 'intermediate_size'), qkvBias: bias, oBias: bias }, vision: 0 };
    }
    case 'qwen2':
    case 'qwen3': {
      // Qwen2 always has q/k/v biases (modeling_qwen2 `bias=True`); Qwen3 has q/k norms and no biases.
      const c = common(top, top, false);
      const window = optBool(top, 'use_sliding_window', false) ? optPosInt(top, 'sliding_window', null, 1 << 30) : null;
      const first = optCount(top, 'max_window_layers', c.layers);
      const sw = sliding(top, c.layers, window, c.context, (i) => i >= first);
      return { shape: { ...c, ...noMoe, intermediate: posInt(top, 'intermediate_size'), qkvBias: family === 'qwen2', qkNorm: family === 'qwen3', sliding: sw }, vision: 0 };
    }
    case 'gemma2': {
      // Gemma 2 alternates: even layers slide (modeling_gemma2 `is_sliding = not bool(layer_idx % 2)`).
      const c = common(top, top, true);
      const sw = sliding(top, c.layers, optPosInt(top, 'sliding_window', null, 1 << 30), c.context, (i) => i % 2 === 0);
      return { shape: { ...c, ...noMoe, intermediate: posInt(top, 'intermediate_size'), normsPerLayer: 4, sliding: sw }, vision: 0 };
    }
    case 'gemma3':
      return gemma3(top);
    case 'mixtral': {
      const c = common(top, top, false);
      const moe = moeShape(top, c, { experts: 'num_local_experts', inter: 'intermediate_size' });
      return { shape: { ...c, ...noMoe, intermediate: moe.expertInter, moe }, vision: 0 };
    }
    case 'qwen2_moe':
    case 'qwen3_moe':
      return qwenMoe(family, top);
    case 'gpt_oss': {
      // gpt-oss (modeling_gpt_oss): biased q/k/v/o, a sink per head, a biased router, biased experts;
      // layer_types alternate sliding and full attention, sliding first.
      const c = common(top, top, false);
      const moe = { ...moeShape(top, c, { experts: 'num_local_experts', inter: 'intermediate_size' }), routerBias: true, expertBias: true };
      const sw = sliding(top, c.layers, optPosInt(top, 'sliding_window', null, 1 << 30), c.context, (i) => i % 2 === 0);
      return { shape: { ...c, ...noMoe, intermediate: moe.expertInter, moe, qkvBias: true, oBias: true, sinks: true, sliding: sw }, vision: 0 };
    }
    case 'deepseek':
      return deepseek(top);
    case 'llama4':
      return llama4(top);
    default:
      return assertNever(family, 'architecture family');
  }
}

function moeShape(t: Section, c: Common, keys: { experts: string; inter: string }): MoeShape {
  const experts = posInt(t, keys.experts, 4096);
  const topK = t.json['num_experts_per_tok'] === undefined && t.json['experts_per_token'] !== undefined ? posInt(t, 'experts_per_token', 4096) : posInt(t, 'num_experts_per_tok', 4096);
  if (topK > experts) throw invalid(`${t.at}num_experts_per_tok`, `(${topK}) exceeds the expert count (${experts})`, topK);
  return { experts, topK, shared: 0, expertInter: posInt(t, keys.inter), denseLayers: 0, routerBias: false, expertBias: false, sharedGate: false };
}

/** Qwen2/3-MoE: layer i is MoE when (i + 1) % decoder_sparse_step == 0 and i is not in mlp_only_layers (modeling_qwen2_moe). */
function qwenMoe(family: 'qwen2_moe' | 'qwen3_moe', top: Section): { shape: TextShape; vision: number } {
  const c = common(top, top, false);
  const base = moeShape(top, c, { experts: 'num_experts', inter: 'moe_intermediate_size' });
  const step = optPosInt(top, 'decoder_sparse_step', 1, MAX_LAYERS);
  const mlpOnly = new Set(optArray<number>(top, 'mlp_only_layers', 'number') ?? []);
  const moeCount = Array.from({ length: c.layers }, (_, i) => i).filter((i) => (i + 1) % step === 0 && !mlpOnly.has(i)).length;
  let shared = 0;
  if (family === 'qwen2_moe') {
    // One shared expert of shared_expert_intermediate_size, counted in units of a routed expert's width.
    const width = optCount(top, 'shared_expert_intermediate_size', 0);
    if (width % base.expertInter !== 0) {
      throw new LmBenchError('LMB_ERR_UNSUPPORTED_ARCHITECTURE', `config.json: shared_expert_intermediate_size (${width}) is not a multiple of moe_intermediate_size (${base.expertInter}); lm-bench prices shared experts in routed experts' widths`, { details: { field: 'shared_expert_intermediate_size', value: width } });
    }
    shared = width / base.expertInter;
  }
  const moe: MoeShape = { ...base, shared, sharedGate: shared > 0, denseLayers: c.layers - moeCount };
  return { shape: { ...c, ...noMoe, intermediate: posInt(top, 'intermediate_size'), moe, qkvBias: family === 'qwen2_moe', qkNorm: family === 'qwen3_moe' }, vision: 0 };
}

/**
 * Gemma 3: 5 local layers to 1 global (`sliding_window_pattern` 6: layer i is global when (i + 1) % 6
 * == 0, modeling_gemma3), four norms per layer and q/k norms; the multimodal checkpoint nests the
 * language model under `text_config` beside a SigLIP `vision_config` and a projector to the text width.
 */
function gemma3(top: Section): { shape: TextShape; vision: number } {
  const t = withDefaults(optSection(top, 'text_config') ?? top, GEMMA3_TEXT_DEFAULTS);
  const c = common(t, top, true, false);
  const pattern = optPosInt(t, 'sliding_window_pattern', 6, MAX_LAYERS);
  const sw = sliding(t, c.layers, optPosInt(t, 'sliding_window', null, 1 << 30), c.context, (i) => (i + 1) % pattern !== 0);
  const v = optSection(top, 'vision_config');
  const vision = v === null ? 0 : visionParams({ layers: posInt(v, 'num_hidden_layers', MAX_LAYERS), hidden: posInt(v, 'hidden_size'), intermediate: posInt(v, 'intermediate_size'), patch: posInt(v, 'patch_size'), image: posInt(v, 'image_size'), adapter: null }, c.hidden);
  return { shape: { ...c, ...noMoe, intermediate: posInt(t, 'intermediate_size'), normsPerLayer: 4, qkNorm: true, sliding: sw }, vision };
}

/**
 * DeepSeek V2/V3/R1 (modeling_deepseek, vLLM deepseek_v2.py): multi-head latent attention; the first
 * `first_k_dense_replace` layers dense, then MoE every `moe_layer_freq` layers with
 * `n_routed_experts` of `moe_intermediate_size`, top `num_experts_per_tok`, and `n_shared_experts`.
 * V3's router adds a correction bias per expert (`topk_method: noaux_tc`). The multi-token-prediction
 * layers (`num_nextn_predict_layers`) are not counted: vLLM loads them only as a speculative draft, and
 * DeepSeek-V3's 671B excludes its 14B MTP module (model card). vLLM treats MLA as one KV head of
 * kv_lora_rank + qk_rope_head_dim; head_dim is the per-head query/key width, nope + rope.
 */
function deepseek(top: Section): { shape: TextShape; vision: number } {
  const c = common(top, top, false);
  const mla = {
    kv_lora_rank: posInt(top, 'kv_lora_rank'),
    qk_rope_head_dim: posInt(top, 'qk_rope_head_dim'),
    qk_nope_head_dim: posInt(top, 'qk_nope_head_dim'),
    v_head_dim: posInt(top, 'v_head_dim'),
    q_lora_rank: optPosInt(top, 'q_lora_rank', null),
  };
  const base = moeShape(top, c, { experts: 'n_routed_experts', inter: 'moe_intermediate_size' });
  const firstDense = optCount(top, 'first_k_dense_replace', 0);
  const freq = optPosInt(top, 'moe_layer_freq', 1, MAX_LAYERS);
  const moeCount = Array.from({ length: c.layers }, (_, i) => i).filter((i) => i >= firstDense && i % freq === 0).length;
  const moe: MoeShape = { ...base, shared: optCount(top, 'n_shared_experts', 0), denseLayers: c.layers - moeCount, routerBias: top.json['topk_method'] === 'noaux_tc' };
  const shape: TextShape = { ...c, ...noMoe, kvHeads: 1, headDim: mla.qk_nope_head_dim + mla.qk_rope_head_dim, intermediate: posInt(top, 'intermediate_size'), mla, moe };
  return { shape, vision: 0 };
}

/**
 * Llama 4 (modeling_llama4, vLLM llama4.py): MoE on the layers listed in `moe_layers`, else every
 * `interleave_moe_layer_step`-th; each MoE layer has `num_local_experts` of `intermediate_size`, top
 * `num_experts_per_tok`, and one shared expert of the same width; dense layers use
 * `intermediate_size_mlp`. Chunked attention (`attention_chunk_size`) on the RoPE layers;
 * `no_rope_layers` marks them 1 and the global NoPE layers (every 4th) 0. Its q/k norm has no weights.
 */
function llama4(top: Section): { shape: TextShape; vision: number } {
  const t = withDefaults(optSection(top, 'text_config') ?? top, LLAMA4_TEXT_DEFAULTS);
  const c = common(t, top, false);
  const base = moeShape(t, c, { experts: 'num_local_experts', inter: 'intermediate_size' });
  const listed = optArray<number>(t, 'moe_layers', 'number');
  if (listed !== null && (new Set(listed).size !== listed.length || listed.some((i) => !Number.isInteger(i) || i < 0 || i >= c.layers))) {
    // Counted, not matched: a repeated or out-of-range index would miscount the MoE layers silently.
    throw invalid(`${t.at}moe_layers`, `must list distinct layer indices from 0 to ${c.layers - 1}, got ${JSON.stringify(listed)}`, listed);
  }
  const step = optPosInt(t, 'interleave_moe_layer_step', 1, MAX_LAYERS);
  const moeCount = listed?.length ?? Array.from({ length: c.layers }, (_, i) => i).filter((i) => (i + 1) % step === 0).length;
  const moe: MoeShape = { ...base, shared: 1, denseLayers: c.layers - moeCount };
  const chunk = optPosInt(t, 'attention_chunk_size', null, 1 << 30);
  // transformers takes an empty `no_rope_layers` (as some published text_configs write it) as absent:
  // every `no_rope_layer_interval`-th layer is NoPE.
  const listedFlags = optArray<number>(t, 'no_rope_layers', 'number');
  const ropeFlags = listedFlags === null || listedFlags.length === 0 ? null : listedFlags;
  if (ropeFlags !== null && ropeFlags.length !== c.layers) throw invalid(`${t.at}no_rope_layers`, `lists ${ropeFlags.length} layers, num_hidden_layers is ${c.layers}`);
  const noRopeEvery = optPosInt(t, 'no_rope_layer_interval', 4, MAX_LAYERS);
  const chunkedLayers = ropeFlags === null ? c.layers - Math.floor(c.layers / noRopeEvery) : ropeFlags.filter((f) => f !== 0).length;
  const chunked = chunk === null || chunkedLayers === 0 || chunkedLayers === c.layers || chunk >= c.context ? null : { tokens: chunk, layers: chunkedLayers };
  const v = optSection(top, 'vision_config');
  const vision =
    v === null
      ? 0
      : visionParams(
          {
            layers: posInt(v, 'num_hidden_layers', MAX_LAYERS),
            hidden: posInt(v, 'hidden_size'),
            intermediate: posInt(v, 'intermediate_size'),
            patch: posInt(v, 'patch_size'),
            image: posInt(v, 'image_size'),
            adapter: { ratio: typeof v.json['pixel_shuffle_ratio'] === 'number' ? v.json['pixel_shuffle_ratio'] : 0.5, adapterIn: posInt(v, 'projector_input_dim'), adapterOut: posInt(v, 'projector_output_dim') },
          },
          c.hidden,
        );
  return { shape: { ...c, ...noMoe, intermediate: posInt(t, 'intermediate_size_mlp'), moe, chunked }, vision };
}
