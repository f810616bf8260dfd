/**
 * vLLM's `max_output_tokens_per_s` without every token's time: the tokens emitted in each whole second
 * counted from the first successful request's send (metrics/benchmark.ts `maxChunksPerSecond` bins the
 * per-token records the same way, `floor(t − t0)`), one counter per second of the run. The DES sends in
 * time order and refuses a request at its send, so the first request it lets through sets `t0` before
 * any token is emitted.
 */
export class TokenRate {
  private originS = Number.NaN;
  private readonly bins = new Map<number, number>();

  /** The first successful request's send time; later calls change nothing. */
  origin(sendS: number): void {
    if (Number.isNaN(this.originS)) this.originS = sendS;
  }

  /** `count` tokens emitted at `atS`. */
  add(atS: number, count: number): void {
    if (count <= 0) return;
    const b = Math.floor(atS - this.originS);
    this.bins.set(b, (this.bins.get(b) ?? 0) + count);
  }

  /** The most tokens in any one second (0 without any). */
  peak(): number {
    let max = 0;
    for (const n of this.bins.values()) if (n > max) max = n;
    return max;
  }
}
