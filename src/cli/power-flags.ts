import { LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { PowerSpec, parseMetricsUrl } from '../loadgen/power/index.js';

/**
 * `run`'s power flags → where the run reads its GPUs' power, or undefined (no `energy` block):
 *   --power-metrics URL   a DCGM exporter's /metrics (repeatable: one per node of the deployment)
 *   --power-smi nvidia|amd  sample nvidia-smi / amd-smi here (the server runs on this machine)
 *   --power-gpus LIST     which GPUs count (indices or UUIDs); default every GPU the source reports
 * The URLs are checked now (scheme, credentials, the loopback policy), so a bad one fails before load.
 */
export interface PowerFlags {
  readonly 'power-metrics'?: string[] | undefined;
  readonly 'power-smi'?: string | undefined;
  readonly 'power-gpus'?: string | undefined;
}

export function powerSpecOfFlags(v: PowerFlags, env: Readonly<Record<string, string | undefined>>): PowerSpec | undefined {
  const urls = v['power-metrics'] ?? [];
  const smi = v['power-smi'];
  const gpus = v['power-gpus']?.split(',').map((g) => g.trim()).filter((g) => g !== '');
  // A GPU named twice is counted once by every source, but the list's length is the number of GPUs a
  // missing reading is reported against: `0,0` would make one GPU's run read as two.
  const twice = gpus?.find((g, i) => gpus.indexOf(g) !== i);
  if (twice !== undefined) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--power-gpus names GPU ${twice} twice (got "${v['power-gpus'] ?? ''}")`, { details: { field: 'power-gpus', value: v['power-gpus'] } });
  }
  if (urls.length > 0 && smi !== undefined) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--power-metrics and --power-smi both name where power comes from; give one', { details: { field: 'power-smi' } });
  }
  if (smi !== undefined && smi !== 'nvidia' && smi !== 'amd') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--power-smi must be nvidia or amd, got "${smi}"`, { details: { field: 'power-smi' } });
  }
  if (urls.length === 0 && smi === undefined) {
    if (gpus !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--power-gpus needs --power-metrics or --power-smi', { details: { field: 'power-gpus' } });
    return undefined;
  }
  for (const u of urls) parseMetricsUrl(u, env);
  const raw = urls.length > 0 ? { kind: 'dcgm', urls, gpus } : { kind: smi === 'amd' ? 'amd-smi' : 'nvidia-smi', gpus };
  const res = PowerSpec.safeParse(Object.fromEntries(Object.entries(raw).filter(([, x]) => x !== undefined)));
  if (!res.success) {
    // The flag names the field; each distinct complaint about its entries is said once.
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--power-gpus: ${formatZodIssues(res.error.issues, undefined, () => '')} (got "${v['power-gpus'] ?? ''}")`, { details: { field: 'power-gpus' } });
  }
  return res.data;
}
