import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultCatalog } from '../../catalog/index.js';
import type { ResolvedModel } from '../../catalog/resolve-model.js';
import { kvBytesPerToken, localAttention, type Hardware, type ModelSpec } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { resolveConfig, validateConfig, weightBytesPerGpu } from '../../physics/index.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { parseFlags } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { OFFLINE_FLAG, resolveModelFlag } from '../model-flag.js';
import { usage } from '../usage/models.js';
import type { z } from 'zod';
import type { ModelsShowJson } from '../json-output.js';



const TP_SIZES = [1, 2, 4, 8] as const;
const GIB = 1024 ** 3;

/** The catalog's model ids, for the errors that name what MODEL may be (no command lists them). */
const catalogModelIds = (): string => defaultCatalog().models.map((m) => m.id).join(', ');

/** What `models show` reports: plain data, the --json document, as its schema declares it. */
export type ModelReport = z.infer<typeof ModelsShowJson>;

/** The rules a tensor-parallel layout of the model alone breaks, whatever the GPU and the other knobs. */
const LAYOUT_RULES: ReadonlySet<string> = new Set(['C2', 'C3', 'C4', 'C17', 'C18']);

/**
 * How vLLM shards the model over `tp` GPUs: the weights each holds, or why `vllm serve` refuses that
 * size (28 attention heads over 8 GPUs). An MoE whose expert slices do not divide runs with
 * --enable-expert-parallel, whole experts a GPU, and is priced so.
 */
export type TpLayout =
  | { readonly tensor_parallel_size: number; readonly gib: number; readonly expert_parallel: boolean }
  | { readonly tensor_parallel_size: number; readonly refused: string };

export function tpLayout(spec: ModelSpec, hw: Hardware, tp: number): TpLayout {
  const ctx = { hardware: hw, gpuCount: tp, model: spec };
  const refusal = (ep: boolean) => {
    const r = resolveConfig({ tensor_parallel_size: tp, enable_expert_parallel: ep }, hw, spec);
    const f = validateConfig(r, ctx);
    return { r, failure: f !== null && LAYOUT_RULES.has(f.rule) ? f : null };
  };
  const plain = refusal(false);
  const ep = plain.failure !== null && spec.moe !== null && tp > 1 && (plain.failure.rule === 'C17' || plain.failure.rule === 'C18') ? refusal(true) : null;
  const last = ep ?? plain;
  if (last.failure !== null) return { tensor_parallel_size: tp, refused: `${last.failure.rule}: ${last.failure.message}` };
  return { tensor_parallel_size: tp, gib: weightBytesPerGpu(last.r, spec) / GIB, expert_parallel: ep !== null };
}

/** The model at tensor parallelism 1, 2, 4 and 8. */
export function tpLayouts(spec: ModelSpec): TpLayout[] {
  // Weights do not depend on the GPU; resolveConfig wants one for its batch defaults only.
  const hw = defaultCatalog().gpus[0];
  if (hw === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', 'the GPU catalog is empty');
  return TP_SIZES.map((tp) => tpLayout(spec, hw, tp));
}

export function modelReport(resolved: ResolvedModel, historyId: string | null, layouts: readonly TpLayout[] = tpLayouts(resolved.spec)): ModelReport {
  const spec = resolved.spec;
  return {
    id: spec.id,
    history_id: historyId,
    hf_name: spec.hf_name,
    origin: resolved.origin,
    location: resolved.location,
    config_hash: resolved.config_hash,
    params_b: spec.params_b,
    active_params_b: spec.active_params_b,
    kv_bytes_per_token: { bf16: kvBytesPerToken(spec, 2), fp8: kvBytesPerToken(spec, 1) },
    local_attention: localAttention(spec),
    weights_gib_per_gpu: layouts.flatMap((l) => ('gib' in l ? [{ tensor_parallel_size: l.tensor_parallel_size, gib: l.gib }] : [])),
    // The sizes vLLM refuses are said with its reason, not left out (a reader could not tell them from untried).
    tensor_parallel: layouts.map((l) => ({ ...l })),
    spec,
  };
}

const fixed = (x: number, d: number): string => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export function formatModelReport(r: ModelReport, layouts: readonly TpLayout[] = tpLayouts(r.spec)): string {
  const s = r.spec;
  const arch = [
    // MLA caches one latent a layer, not KV heads: its spec's "1 KV head × 192" (the query head width) is
    // no cache shape, so the MLA clause alone says what is cached.
    `${s.layers} layers, hidden ${s.hidden_size}, ${s.num_attention_heads} attention heads${s.mla === null ? `, ${s.num_kv_heads} KV ${s.num_kv_heads === 1 ? 'head' : 'heads'} × ${s.head_dim}` : ` × ${s.head_dim}`}`,
    s.mla === null ? null : `MLA: KV latent ${s.mla.kv_lora_rank} + rope ${s.mla.qk_rope_head_dim} per layer`,
    s.moe === null ? null : `MoE: ${s.moe.experts} experts, top ${s.moe.top_k}${s.moe.shared_experts > 0 ? `, ${s.moe.shared_experts} shared` : ''}, expert width ${s.moe.expert_intermediate_size}`,
    r.local_attention === null ? null : `local attention: ${r.local_attention.layers} layers keep ≤ ${fixed(r.local_attention.tokens, 0)} tokens of KV`,
  ].filter((x): x is string => x !== null);
  const lines = [
    `Model ${r.id} (${r.hf_name})`,
    `  from:          ${r.origin === 'catalog' ? 'the catalog (data/models.yaml)' : `${r.origin}: ${r.location}`}`,
    `  config hash:   ${r.config_hash ?? '- (a catalog row, data/models.yaml)'}`,
    ...(r.history_id === null ? [] : [`  history id:    ${r.history_id}`]),
    `  parameters:    ${fixed(r.params_b, 2)} B total, ${fixed(r.active_params_b, 2)} B active per token${s.vision_params_b > 0 ? ` (${fixed(s.vision_params_b, 2)} B vision tower)` : ''}`,
    `  architecture:  ${arch.join('; ')}`,
    `  precision:     ${s.dtype}${s.native_quantization === 'none' ? '' : `, ${s.native_quantization} checkpoint`}; context ${fixed(s.native_context, 0)} tokens`,
    // kv_cache_dtype=auto caches in the model's dtype: a float16 checkpoint's 2-byte cache is fp16.
    `  KV per token:  ${fixed(r.kv_bytes_per_token.bf16, 0)} bytes (${s.dtype === 'float16' ? 'fp16' : 'bf16'} cache), ${fixed(r.kv_bytes_per_token.fp8, 0)} bytes (fp8)`,
    `  weights/GPU:   ${layouts.map((l) => `TP${l.tensor_parallel_size} ${'gib' in l ? `${fixed(l.gib, 1)} GiB${l.expert_parallel ? ' (with --enable-expert-parallel)' : ''}` : 'refused'}`).join(', ')}`,
    ...layouts.flatMap((l) => ('refused' in l ? [`    TP${l.tensor_parallel_size}: vLLM refuses it, ${l.refused}`] : [])),
  ];
  return `${lines.join('\n')}\n`;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...OFFLINE_FLAG, db: { type: 'string' }, json: { type: 'boolean' } }, true);
  const [sub, name, ...extra] = positionals;
  if (sub !== 'show') {
    const what = sub === undefined ? 'needs a subcommand' : `unknown subcommand "${sub}"`;
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `models: ${what}; use \`lm-bench models show MODEL\` (catalog models: ${catalogModelIds()})`, { details: { field: 'subcommand' } });
  }
  // MODEL is positional: "missing required flag --model" would send the user looking for a flag.
  if (name === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `models show needs a MODEL: a catalog id (${catalogModelIds()}), a config.json directory or an ORG/NAME repo`, { details: { field: 'model' } });
  if (extra.length > 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `models show takes one MODEL, got also ${extra.join(' ')}`, { details: { field: 'model' } });
  const dbPath = values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db);
  // Read-only, and only a history that exists: showing a model never creates or writes one.
  const store = existsSync(dbPath) ? openStore(dbPath, { readonly: true }) : null;
  try {
    const resolved = await resolveModelFlag(name, io, values.offline);
    const historyId = store === null ? null : identifyResolvedModel(store, resolved, defaultCatalog()).spec.id;
    const layouts = tpLayouts(resolved.spec);
    const report = modelReport(resolved, historyId, layouts);
    if (values.json === true) writeJson(io, report);
    else io.stdout.write(formatModelReport(report, layouts));
    return 0;
  } finally {
    store?.close();
  }
}

export const command: Command = { name: 'models', summary: 'the LLM a --model name resolves to: its spec, origin, sizes', usage, run };
