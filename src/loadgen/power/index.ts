import { assertNever } from '../../errors.js';
import { createAmdSmiMeter } from './amd-smi.js';
import { createDcgmMeter } from './dcgm.js';
import { createNvidiaSmiMeter } from './nvidia-smi.js';
import type { PowerMeter, PowerSpec } from './types.js';

export { PowerSpec, type PowerSpecInput, type PowerMeter, type PowerReading, type GpuSeries } from './types.js';
export { energyFromReading, loadWindow } from './energy.js';
export { parseMetricsUrl } from './dcgm.js';

/**
 * The meter a spec names. `env` is where a sampler finds its executable (PATH) and the loopback policy
 * (LMB_LOOPBACK_ONLY): a DCGM URL off this machine is refused here, before any load is sent.
 */
export function createPowerMeter(spec: PowerSpec, env: Readonly<Record<string, string | undefined>>): PowerMeter {
  switch (spec.kind) {
    case 'dcgm':
      return createDcgmMeter(spec, env);
    case 'nvidia-smi':
      return createNvidiaSmiMeter(spec, { env });
    case 'amd-smi':
      return createAmdSmiMeter(spec, { env });
    default:
      return assertNever(spec, 'power source');
  }
}

/** The GPU count an unavailable block names: the deployment's when known, else the GPUs asked for, else one. */
export function expectedGpus(spec: PowerSpec): number {
  return spec.expected_gpus ?? spec.gpus?.length ?? 1;
}
