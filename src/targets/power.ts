import type { ServerConfig } from '../domain/index.js';
import { PowerSpec } from '../loadgen/power/index.js';

/**
 * The power source of a server this process starts (the vllm target, a Slurm job's `trial-run`): the
 * vendor's SMI tool on this machine, sampled over the load window. The GPUs counted are the server's:
 * those CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES on AMD) names in the server's
 * environment, as Slurm sets it for a job's GPUs; else the first tp × dp, the ones vLLM takes when
 * nothing narrows its view. A machine without the tool leaves power unavailable, with that reason.
 */
export function serverPowerSpec(vendor: 'nvidia' | 'amd', config: ServerConfig, env: Readonly<Record<string, string | undefined>>): PowerSpec {
  const deployment = (config.tensor_parallel_size ?? 1) * (config.data_parallel_size ?? 1);
  const visible = vendor === 'nvidia' ? env['CUDA_VISIBLE_DEVICES'] : (env['HIP_VISIBLE_DEVICES'] ?? env['ROCR_VISIBLE_DEVICES'] ?? env['CUDA_VISIBLE_DEVICES']);
  const listed = visible?.split(',').map((g) => g.trim()).filter((g) => /^[A-Za-z0-9:._-]+$/.test(g));
  // The server uses the first `deployment` of the devices it sees.
  const gpus = listed !== undefined && listed.length > 0 ? listed.slice(0, deployment) : Array.from({ length: deployment }, (_, i) => String(i));
  return PowerSpec.parse({ kind: vendor === 'nvidia' ? 'nvidia-smi' : 'amd-smi', gpus, expected_gpus: deployment });
}
