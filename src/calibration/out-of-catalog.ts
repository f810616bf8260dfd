import { createHash } from 'node:crypto';
import type { Catalog } from '../catalog/index.js';
import { registerModel } from '../catalog/index.js';
import { writeCachedConfig } from '../catalog/hf-cache.js';
import { resolveModel, type ResolvedModel } from '../catalog/resolve-model.js';
import { LmBenchError } from '../errors.js';

/**
 * Models outside data/models.yaml, for the checks that every row of a calibration layout is predicted
 * whatever checkpoint it names (issue 24): their config.json files written into a Hugging Face cache as
 * `huggingface-cli download` lays it out, then resolved by their Hugging Face ids the way `--model` and
 * `sim predict` resolve them, offline (HF_HUB_OFFLINE=1), and registered so the catalog's synchronous
 * lookups (and the simulator pool's threads) find them.
 */

export interface CachedConfig {
  /** The Hugging Face id the rows name, `ORG/NAME`. */
  readonly repo: string;
  /** The config.json text. */
  readonly config: string;
}

/**
 * Writes each config.json under `root` (blobs/<sha256>, snapshots/<rev>/config.json a link to it,
 * refs/main the revision), the revision derived from the bytes so a changed fixture is a new revision.
 */
export function writeHfCache(root: string, entries: readonly CachedConfig[]): void {
  for (const e of entries) {
    const bytes = Buffer.from(e.config, 'utf8');
    const sha = createHash('sha256').update(bytes).digest('hex');
    writeCachedConfig(root, e.repo, { commit: sha.slice(0, 40), etag: sha, bytes });
  }
}

/**
 * Each name resolved from the cache at `cacheRoot` only (never the hub) and registered. A name the
 * catalog already knows is refused: these checks are about the config.json path, and a catalog hit
 * would measure the catalog row instead.
 */
export async function resolveFromCache(names: readonly string[], o: { catalog: Catalog; cacheRoot: string }): Promise<Map<string, ResolvedModel>> {
  const out = new Map<string, ResolvedModel>();
  for (const name of new Set(names)) {
    const r = await resolveModel(name, { catalog: o.catalog, env: { HF_HUB_CACHE: o.cacheRoot, HF_HUB_OFFLINE: '1' }, offline: true });
    if (r.origin !== 'hf-cache') {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `${name} resolved from ${r.origin} (${r.location}), not from the Hugging Face cache: an out-of-catalog check needs a name the catalog does not know`, {
        details: { field: 'model', value: name },
      });
    }
    registerModel(r.spec, r.config_hash);
    out.set(name, r);
  }
  return out;
}

/**
 * Rows in ML.ENERGY Benchmark v3's layout (mlenergy-rows.ts) for checkpoints outside the catalog, one per
 * kind of attention or FFN the simulator prices differently, without measurements (none are published
 * for these models under this protocol): they check that every row is predicted, not how well. GPU
 * counts are ones where the bf16 (DeepSeek-V3: fp8) weights leave room for the KV cache; avg_output_len
 * is of the order of the Qwen3 rows' (≈600 tokens). The MoE rows follow ML.ENERGY's labels for expert
 * parallelism (tp 1, ep = the GPUs), which the protocol runs as TP = the GPUs with EP.
 */
export const OUT_OF_CATALOG_MLENERGY_ROWS = `model_id,task,weight_precision,total_params_b,active_params_b,gpu,num_gpus,tp,dp,ep,max_num_seqs,avg_batch_size,avg_output_len,output_throughput_tok_s,median_itl_ms,p90_itl_ms,p95_itl_ms,p99_itl_ms,avg_power_w
microsoft/phi-4,lm-arena-chat,bfloat16,14.7,14.7,H100,1,1,1,1,16,,600,,,,,,
microsoft/phi-4,lm-arena-chat,bfloat16,14.7,14.7,H100,1,1,1,1,128,,600,,,,,,
mistralai/Mistral-Small-24B-Instruct-2501,lm-arena-chat,bfloat16,23.6,23.6,H100,1,1,1,1,16,,600,,,,,,
mistralai/Mistral-Small-24B-Instruct-2501,lm-arena-chat,bfloat16,23.6,23.6,H100,1,1,1,1,128,,600,,,,,,
google/gemma-2-9b-it,lm-arena-chat,bfloat16,9.2,9.2,H100,1,1,1,1,16,,600,,,,,,
google/gemma-2-9b-it,lm-arena-chat,bfloat16,9.2,9.2,H100,1,1,1,1,128,,600,,,,,,
google/gemma-3-27b-it,lm-arena-chat,bfloat16,27.4,27.4,H100,1,1,1,1,16,,600,,,,,,
google/gemma-3-27b-it,lm-arena-chat,bfloat16,27.4,27.4,H100,1,1,1,1,128,,600,,,,,,
google/gemma-3-27b-it,lm-arena-chat,bfloat16,27.4,27.4,B200,1,1,1,1,256,,600,,,,,,
meta-llama/Llama-4-Scout-17B-16E-Instruct,lm-arena-chat,bfloat16,108.6,17.2,H100,4,1,1,4,16,,600,,,,,,
meta-llama/Llama-4-Scout-17B-16E-Instruct,lm-arena-chat,bfloat16,108.6,17.2,H100,4,1,1,4,256,,600,,,,,,
meta-llama/Llama-4-Scout-17B-16E-Instruct,lm-arena-chat,bfloat16,108.6,17.2,B200,2,1,1,2,256,,600,,,,,,
deepseek-ai/DeepSeek-V3,lm-arena-chat,fp8,671.0,37.6,B200,8,1,1,8,16,,600,,,,,,
deepseek-ai/DeepSeek-V3,lm-arena-chat,fp8,671.0,37.6,B200,8,1,1,8,256,,600,,,,,,
deepseek-ai/DeepSeek-V3,lm-arena-chat,fp8,671.0,37.6,H200,8,1,1,8,128,,600,,,,,,
`;

/**
 * Which file of test/fixtures/hf-configs/ holds each out-of-catalog checkpoint's config.json (that
 * folder's README gives the source of each).
 */
export const OUT_OF_CATALOG_FIXTURES: Readonly<Record<string, string>> = {
  'Qwen/Qwen2-7B': 'qwen2-7b',
  'Qwen/Qwen2-72B': 'qwen2-72b',
  'meta-llama/Llama-2-7b-hf': 'llama-2-7b-hf',
  'meta-llama/Llama-2-70b-hf': 'llama-2-70b-hf',
  'microsoft/phi-4': 'phi-4',
  'mistralai/Mistral-Small-24B-Instruct-2501': 'mistral-small-24b-instruct-2501',
  'google/gemma-2-9b-it': 'gemma-2-9b-it',
  'google/gemma-3-27b-it': 'gemma-3-27b-it',
  'meta-llama/Llama-4-Scout-17B-16E-Instruct': 'llama-4-scout-17b-16e-instruct',
  'deepseek-ai/DeepSeek-V3': 'deepseek-v3',
};
