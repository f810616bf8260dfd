import type { Arrival, BenchmarkResult, Workload } from '../../src/domain/index.js';

// The plan tests' stand-in replicas: a fixed-length chat workload, and the few figures of a run that the
// planner reads (counts, rate, tok/s, p99s, saturation, and a simulated power window of 80 s), each
// stand-in choosing them from the load it is given so the plan's answer is known in closed form.

export function fixedChat(outputTokens = 200, arrival: Arrival = { kind: 'closed', concurrency: 1 }): Workload {
  return {
    name: 'chat',
    api: 'chat',
    input_len: { dist: 'fixed', value: 256 },
    output_len: { dist: 'fixed', value: outputTokens },
    arrival,
    num_prompts: 200,
    ignore_eos: true,
  };
}

export interface StandInRun {
  readonly completed: number;
  readonly rps: number;
  readonly tokS: number;
  readonly p99TtftMs: number;
  readonly powerW: number;
  /** More figures a test's planner path reads (means for the speed correction). */
  readonly extra?: Record<string, number>;
}

export function standInResult(r: StandInRun): BenchmarkResult {
  const windowS = 80;
  return {
    completed: r.completed,
    failed: 0,
    request_throughput: r.rps,
    output_throughput: r.tokS,
    duration: 100,
    ...r.extra,
    p99_ttft_ms: r.p99TtftMs,
    p99_itl_ms: 20,
    saturation: null,
    energy: {
      source: 'sim',
      gpus: 1,
      window: { start_s: 10, end_s: 10 + windowS, rule: 'steady-state' },
      avg_power_w: r.powerW,
      energy_j: r.powerW * windowS,
      energy_per_output_token_j: r.powerW / r.tokS,
      output_tokens_per_joule: r.tokS / r.powerW,
      unavailable_reason: null,
    },
  } as unknown as BenchmarkResult;
}
