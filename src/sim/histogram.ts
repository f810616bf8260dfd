/**
 * A Prometheus histogram as vLLM exposes one (cumulative `_bucket{le=…}` counts, `_sum`, `_count`),
 * kept as per-bucket counts so a scrape costs the same however long the server has run.
 */
export class PromHistogram {
  readonly buckets: readonly number[];
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(buckets: readonly number[]) {
    this.buckets = buckets;
    this.counts = buckets.map(() => 0);
  }

  observe(x: number): void {
    this.sum += x;
    this.count++;
    const i = this.buckets.findIndex((b) => x <= b);
    if (i >= 0) this.counts[i] = (this.counts[i] as number) + 1;
  }

  /** The exposition lines, `labels` already formatted (`model_name="m",engine="0"`). */
  render(name: string, help: string, labels: string): string[] {
    const out = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    let cumulative = 0;
    this.buckets.forEach((b, i) => {
      cumulative += this.counts[i] as number;
      out.push(`${name}_bucket{${labels},le="${b}"} ${cumulative}`);
    });
    out.push(`${name}_bucket{${labels},le="+Inf"} ${this.count}`, `${name}_sum{${labels}} ${this.sum}`, `${name}_count{${labels}} ${this.count}`);
    return out;
  }
}

/** vLLM's buckets (vllm/v1/metrics/loggers.py): TTFT, the request-phase latencies, tokens per step. */
export const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
export const REQUEST_LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
export const ITERATION_TOKEN_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** vLLM's inter-token latency buckets (seconds). */
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];

/** vLLM's 1-2-5 buckets up to `max` (`build_1_2_5_buckets`): the per-request token-count histograms. */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let exp = 1; ; exp *= 10) {
    for (const m of [1, 2, 5]) {
      if (m * exp > max) return out;
      out.push(m * exp);
    }
  }
}
