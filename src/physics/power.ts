import type { Hardware, PowerProfile, ResolvedServerConfig } from '../domain/index.js';

/**
 * Power of the GPUs that serve a model, step by step. A GPU holding a loaded model sits at its idle
 * power between steps (vLLM keeps it in its P0 clock state, so "idle" is the server's idle, not a
 * bare card's); while a step runs it draws, on top, a share of the range from idle to its TDP:
 *
 *   P = P_idle + (TDP − P_idle) · min(1, busy_weight · GPU-busy share
 *                                      + compute_weight · tensor utilisation
 *                                      + memory_weight · HBM utilisation)
 *
 * with the utilisations the step's FLOPs and bytes at the datasheet peaks over its wall time
 * (step-activity.ts). Everything is a fraction of the GPU's datasheet TDP, so a GPU without a power
 * measurement (A100, H200, L40S) follows from its datasheet. The min(1, …) is the power cap: a GPU
 * that would draw more slows its clocks instead. Energy of a step = P × its wall time; the
 * simulator integrates it over a window (sim/energy.ts).
 */
export interface PowerModel {
  /** GPUs of one replica (its tensor-parallel ranks), whose power the replica's steps draw. */
  readonly gpusPerReplica: number;
  /** One GPU's idle and maximum power, W. */
  readonly idleW: number;
  readonly tdpW: number;
  /**
   * Energy above idle, J, of one step on all the replica's GPUs: `computeS` and `memoryS` are its
   * activity seconds (at the datasheet peaks), `busyS` the seconds it ran kernels, `wallS` its
   * duration (at least busyS).
   */
  dynamicJ(computeS: number, memoryS: number, busyS: number, wallS: number): number;
}

export function makePowerModel(hw: Pick<Hardware, 'tdp_w'>, p: PowerProfile, gpusPerReplica: number): PowerModel {
  const tdpW = hw.tdp_w;
  const idleW = p.idle_tdp_frac * tdpW;
  const rangeJ = gpusPerReplica * (tdpW - idleW);
  const { busy_weight: busy, compute_weight: compute, memory_weight: memory } = p;
  return {
    gpusPerReplica,
    idleW,
    tdpW,
    dynamicJ: (computeS, memoryS, busyS, wallS) => rangeJ * Math.min(wallS, busy * busyS + compute * computeS + memory * memoryS),
  };
}

/** One GPU's power during a step with these utilisations (each a share of the step's wall time), W. */
export function stepPowerW(model: PowerModel, computeUtil: number, memoryUtil: number, busyShare: number): number {
  return model.idleW + model.dynamicJ(computeUtil, memoryUtil, busyShare, 1) / model.gpusPerReplica;
}

/** The GPUs a deployment powers: tensor-parallel ranks × data-parallel replicas. */
export function deploymentGpus(r: Pick<ResolvedServerConfig, 'tensor_parallel_size' | 'data_parallel_size'>): number {
  return r.tensor_parallel_size * r.data_parallel_size;
}

/**
 * GPUs of a deployment of `count` that no replica uses (TP × DP below the count): they draw idle power,
 * and the deployment's energy counts them (sim run, sim serve and the surrogate's baseline alike).
 */
export function idleGpus(count: number, r: Pick<ResolvedServerConfig, 'tensor_parallel_size' | 'data_parallel_size'>): number {
  return Math.max(0, count - deploymentGpus(r));
}
