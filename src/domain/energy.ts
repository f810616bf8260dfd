import { z } from 'zod';

/**
 * Power and energy of a run over its load window (issue 25), all GPUs of the deployment together.
 * `source` says how it was known: the simulator's power model, a DCGM exporter's energy counter
 * (deltas of DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) or its power gauge integrated
 * (DCGM_FI_DEV_POWER_USAGE), `nvidia-smi`/`amd-smi` sampled on the server's machine, or a file that
 * recorded it (ML.ENERGY, AIPerf). When power could not be read the block says why, with every figure
 * null, and the run is still a run: power is never a reason to lose a measurement.
 */
export const EnergySource = z.enum(['sim', 'dcgm-energy', 'dcgm-power', 'nvidia-smi', 'amd-smi', 'ingest']);
export type EnergySource = z.infer<typeof EnergySource>;

export const EnergyWindow = z.strictObject({
  start_s: z.number().nonnegative(),
  end_s: z.number().nonnegative(),
  /**
   * `steady-state`: ML.ENERGY's rule, from the instant max_num_seqs requests have their first token to
   * when N − max_num_seqs − 1 have finished; `load`: the whole load window (first request sent to last
   * answer), when the steady state was not reached or not asked for.
   */
  rule: z.enum(['steady-state', 'load']),
});
export type EnergyWindow = z.infer<typeof EnergyWindow>;

export const Energy = z.strictObject({
  source: EnergySource,
  /** GPUs whose power is summed (the deployment's, tp × dp × replicas). */
  gpus: z.int().positive(),
  window: EnergyWindow.nullable(),
  /** Average power of all the GPUs together over the window, W. */
  avg_power_w: z.number().nonnegative().nullable(),
  energy_j: z.number().nonnegative().nullable(),
  /** Joules per output token over the window (energy ÷ output tokens generated in it). */
  energy_per_output_token_j: z.number().nonnegative().nullable(),
  output_tokens_per_joule: z.number().nonnegative().nullable(),
  /** Why the figures are null (the exporter hung, nvidia-smi was not found…); null when they are known. */
  unavailable_reason: z.string().nullable(),
});
export type Energy = z.infer<typeof Energy>;

/** An Energy block that records only why power is unknown. */
export function energyUnavailable(source: EnergySource, gpus: number, reason: string): Energy {
  return { source, gpus, window: null, avg_power_w: null, energy_j: null, energy_per_output_token_j: null, output_tokens_per_joule: null, unavailable_reason: reason };
}

/** An Energy block from a window's average power and the output tokens generated in it. */
export function energyOf(source: EnergySource, gpus: number, window: EnergyWindow, avgPowerW: number, outputTokens: number): Energy {
  const durationS = Math.max(0, window.end_s - window.start_s);
  const energyJ = avgPowerW * durationS;
  const perToken = outputTokens > 0 && durationS > 0 ? energyJ / outputTokens : null;
  return {
    source,
    gpus,
    window,
    avg_power_w: avgPowerW,
    energy_j: energyJ,
    energy_per_output_token_j: perToken,
    output_tokens_per_joule: perToken === null || perToken === 0 ? null : 1 / perToken,
    unavailable_reason: null,
  };
}

/**
 * What a deployment costs (issue 25): the hourly price of its GPUs (data/prices.yaml, `--prices`, or
 * the GPU's own YAML) and, at the output throughput it measured or is predicted to sustain within its
 * SLOs, the price of a million output tokens.
 */
export const Cost = z.strictObject({
  usd_per_gpu_hour: z.number().nonnegative(),
  usd_per_hour: z.number().nonnegative(),
  /** null when nothing was generated (no throughput to divide by). */
  usd_per_million_output_tokens: z.number().nonnegative().nullable(),
  /** Where the price came from: the prices file and its entry's source and date. */
  price_source: z.string(),
});
export type Cost = z.infer<typeof Cost>;

/** Cost of `gpus` GPUs at `usdPerGpuHour`, serving `outputTokensPerS` output tokens a second. */
export function costOf(usdPerGpuHour: number, gpus: number, outputTokensPerS: number, priceSource: string): Cost {
  const usdPerHour = usdPerGpuHour * gpus;
  return {
    usd_per_gpu_hour: usdPerGpuHour,
    usd_per_hour: usdPerHour,
    usd_per_million_output_tokens: outputTokensPerS > 0 ? (usdPerHour / (outputTokensPerS * 3600)) * 1e6 : null,
    price_source: priceSource,
  };
}
