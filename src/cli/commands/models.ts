import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultCatalog } from '../../catalog/index.js';
import type { ResolvedModel } from '../../catalog/resolve-model.js';
import { kvBytesPerToken, localAttention } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { resolveConfig, weightBytesPerGpu } from '../../physics/index.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { OFFLINE_FLAG, resolveModelFlag } from '../model-flag.js';
import { usage } from '../usage/models.js';
import type { z } from 'zod';
import type { ModelsShowJson } from '../json-output.js';



const TP_SIZES = [1, 2, 4, 8] as const;
const GIB = 1024 ** 3;

/** What `models show` reports: plain data, the --json document, as its schema declares it. */
export type ModelReport = z.infer<typeof ModelsShowJson>;

export function modelReport(resolved: ResolvedModel, historyId: string | null): ModelReport {
  const spec = resolved.spec;
  // Weights do not depend on the GPU; resolveConfig wants one for its batch defaults only.
  const hw = defaultCatalog().gpus[0];
  if (hw === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', 'the GPU catalog is empty');
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
    weights_gib_per_gpu: TP_SIZES.map((tp) => ({ tensor_parallel_size: tp, gib: weightBytesPerGpu(resolveConfig({ tensor_parallel_size: tp }, hw, spec), spec) / GIB })),
    spec,
  };
}

const fixed = (x: number, d: number): string => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export function formatModelReport(r: ModelReport): string {
  const s = r.spec;
  const arch = [
    `${s.layers} layers, hidden ${s.hidden_size}, ${s.num_attention_heads} attention heads, ${s.num_kv_heads} KV heads × ${s.head_dim}`,
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
    `  KV per token:  ${fixed(r.kv_bytes_per_token.bf16, 0)} bytes (bf16 cache), ${fixed(r.kv_bytes_per_token.fp8, 0)} bytes (fp8)`,
    `  weights/GPU:   ${r.weights_gib_per_gpu.map((w) => `TP${w.tensor_parallel_size} ${fixed(w.gib, 1)} GiB`).join(', ')}`,
  ];
  return `${lines.join('\n')}\n`;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...OFFLINE_FLAG, db: { type: 'string' }, json: { type: 'boolean' } }, true);
  const [sub, name, ...extra] = positionals;
  if (sub !== 'show') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `models: unknown subcommand "${sub ?? ''}"; use \`lm-bench models show MODEL\``, { details: { field: 'subcommand' } });
  }
  if (extra.length > 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `models show takes one MODEL, got also ${extra.join(' ')}`, { details: { field: 'model' } });
  const dbPath = values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db);
  // Read-only, and only a history that exists: showing a model never creates or writes one.
  const store = existsSync(dbPath) ? openStore(dbPath, { readonly: true }) : null;
  try {
    const resolved = await resolveModelFlag(requireFlag(name, 'model'), io, values.offline);
    const historyId = store === null ? null : identifyResolvedModel(store, resolved, defaultCatalog()).spec.id;
    const report = modelReport(resolved, historyId);
    if (values.json === true) writeJson(io, report);
    else io.stdout.write(formatModelReport(report));
    return 0;
  } finally {
    store?.close();
  }
}

export const command: Command = { name: 'models', summary: 'the LLM a --model name resolves to: its spec, origin, sizes', usage, run };
