import { createHash } from 'node:crypto';
import { ModelSpec } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { invalid, isObject, optArray, optSection, optString, type Json, type Section } from './hf-fields.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { readLanguageModel, SUPPORTED, type Family } from './hf-architectures.js';
import { countParams } from './hf-params.js';
import { precisionFromHfConfig } from './hf-quantization.js';

/**
 * From a Hugging Face `config.json` to the ModelSpec the simulator, memory model and rules use (issue
 * 24): the architecture from `architectures[0]` (or `model_type`), the shape from its fields, the
 * parameter counts from the shape, the precision from `torch_dtype` and `quantization_config`. Pure:
 * the resolver finds and parses the file; this never reads one. Throws LMB_ERR_UNSUPPORTED_ARCHITECTURE
 * for an architecture it cannot derive and LMB_ERR_MODEL_CONFIG_INVALID, naming the field, for a
 * missing or absurd one.
 */

/** More parameters than any model trained so far by two orders of magnitude: a corrupt config. */
const MAX_PARAMS = 1e13;

export function modelSpecFromHfConfig(config: unknown, meta: { id: string; hfName: string; source: string }): ModelSpec {
  if (!isObject(config)) throw invalid('(top level)', 'must be a JSON object');
  const top: Section = { json: config, at: '' };
  const family = familyOf(top);
  const { shape, vision } = readLanguageModel(family, top);
  const precision = precisionFromHfConfig(top, textSection(family, top));
  const params = countParams(shape, vision);
  if (params.total > MAX_PARAMS) {
    throw invalid('(shape)', `gives ${(params.total / 1e9).toFixed(0)}B parameters, more than ${MAX_PARAMS / 1e12} trillion: not a real model`, params.total);
  }
  const moe = shape.moe;
  const spec = ModelSpec.safeParse({
    id: meta.id,
    hf_name: meta.hfName,
    layers: shape.layers,
    hidden_size: shape.hidden,
    num_attention_heads: shape.heads,
    num_kv_heads: shape.kvHeads,
    head_dim: shape.headDim,
    intermediate_size: shape.intermediate,
    vocab_size: shape.vocab,
    tied_embeddings: shape.tied,
    params_b: params.total / 1e9,
    active_params_b: params.active / 1e9,
    linear_params_b: params.linear / 1e9,
    native_context: shape.context,
    moe:
      moe === null
        ? null
        : {
            experts: moe.experts,
            top_k: moe.topK,
            shared_experts: moe.shared,
            expert_intermediate_size: moe.expertInter,
            ...(moe.denseLayers > 0 ? { dense_layers: moe.denseLayers } : {}),
          },
    sliding_window: shape.sliding,
    chunked_attention: shape.chunked,
    mla: shape.mla,
    vision_params_b: vision / 1e9,
    ...precision,
    source: meta.source,
  });
  if (!spec.success) {
    const field = spec.error.issues[0]?.path.join('.') ?? '';
    throw invalid(field === '' ? '(spec)' : field, `gives an invalid ModelSpec: ${formatZodIssues(spec.error.issues)}`);
  }
  return spec.data;
}

/** The section holding the language model: `text_config` for the multimodal wrappers, else the top level. */
function textSection(family: Family, top: Section): Section {
  if (family !== 'gemma3' && family !== 'llama4') return top;
  return optSection(top, 'text_config') ?? top;
}

function familyOf(top: Section): Family {
  const archs = optArray<string>(top, 'architectures', 'string');
  const modelType = optString(top, 'model_type');
  const arch = archs?.[0] ?? null;
  const byArch = arch === null ? undefined : SUPPORTED.architectures[arch];
  if (byArch !== undefined) return byArch;
  const byType = arch === null && modelType !== null ? SUPPORTED.modelTypes[modelType] : undefined;
  if (byType !== undefined) return byType;
  const named = arch ?? (modelType === null ? null : `model_type "${modelType}"`);
  if (named === null) throw invalid('architectures', 'is missing (and so is model_type): cannot tell the architecture');
  throw new LmBenchError(
    'LMB_ERR_UNSUPPORTED_ARCHITECTURE',
    `config.json: architecture ${named} is not one lm-bench derives a model from (supported: ${Object.keys(SUPPORTED.architectures).join(', ')}). ` +
      'A model needs num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim, intermediate_size, vocab_size, ' +
      'max_position_embeddings, and for a mixture of experts the expert count, experts per token and expert width; ' +
      'add the architecture to src/catalog/hf-architectures.ts or a row with these fields to data/models.yaml.',
    { details: { field: 'architectures', value: arch ?? modelType } },
  );
}

/** JSON with every object's keys sorted, arrays in order: the same text for the same checkpoint config however it was written. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    const o: Json = v;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** sha256 (hex) of the canonical JSON of a config.json: the identity of a checkpoint's architecture and precision. */
export function normalisedConfigHash(config: unknown): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex');
}
