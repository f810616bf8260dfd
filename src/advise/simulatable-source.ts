import type { ServerConfig } from '../domain/index.js';
import type { PriorSimulator } from '../calibration/prior-simulator.js';
import type { CandidateSource } from '../optimize/samplers.js';

/**
 * The candidates a simulated answer sends to the discrete-event simulator, less those the simulator's
 * own memory model already condemns: its server does not load (`runtimeOomRisk` null: the weights or the
 * KV cache do not fit) or a run of it more likely than not dies of a run-time CUDA OOM. The search's
 * physics screen rates candidates by a prior that does not see either, and where it expects nothing to
 * meet the SLOs it simulates those it rates nearest: 70B on one H100 with the `code` workload, at
 * 20,000 candidates, put 32 configurations at gpu_memory_utilization 0.98 first, every one of which
 * failed to load or died, where 2,000 candidates left room for ten that ran. The check is the
 * simulator's start-up phase alone (~10 µs a configuration), not a run.
 *
 * When the simulator refuses every candidate drawn (the model does not fit these GPUs at all), the
 * draw is kept as it is, so the answer still simulates some and says why none starts.
 */
export const DIES_PER_RUN = 0.5;

/** The source, and how many of the candidates it drew the simulator refused (they were screened too: the answer counts them). */
export type SimulatableSource = CandidateSource & { readonly refused: () => number };

export function simulatableSource(source: CandidateSource, simulator: Pick<PriorSimulator, 'runtimeOomRisk'>): SimulatableSource {
  const survives = (c: ServerConfig): boolean => {
    const risk = simulator.runtimeOomRisk(c);
    return risk !== null && risk.perRun < DIES_PER_RUN;
  };
  let refused = 0;
  const out: CandidateSource & { refused: () => number } = {
    refused: () => refused,
    sample: (n, rng) => {
      const drawn = source.sample(n, rng);
      const kept = drawn.filter(survives);
      if (kept.length === 0) return drawn;
      refused += drawn.length - kept.length;
      return kept;
    },
    mutate: (config, rng) => source.mutate(config, rng),
    encode: (config) => source.encode(config),
    // The anchors (vLLM's defaults of a layout) pass the space's rules and the simulator's check alike.
    startable: (configs) => {
      const rules = source.startable?.(configs) ?? configs.map(() => true);
      return configs.map((c, i) => rules[i] === true && survives(c));
    },
  };
  const neighbours = source.neighbours?.bind(source);
  // A local search's step the simulator would refuse is a run spent on nothing.
  if (neighbours !== undefined) out.neighbours = (config) => neighbours(config).filter(survives);
  const enumerate = source.enumerate?.bind(source);
  if (enumerate !== undefined) out.enumerate = enumerate;
  return out;
}
