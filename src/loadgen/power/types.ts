import { z } from 'zod';
import type { EnergySource } from '../../domain/index.js';

/**
 * Where a run reads its GPUs' power (issue 25), as plain data so it can cross into a worker thread and
 * be built from flags or a target: a DCGM exporter's Prometheus endpoint(s), or `nvidia-smi` / `amd-smi`
 * sampled on the machine that runs the server. `gpus` narrows the GPUs counted (the exporter's `gpu`
 * label, `nvidia-smi -i`, `amd-smi -g`); absent, every GPU the source reports counts.
 * `expected_gpus` is how many GPUs the deployment has, when known: the count an unavailable block names.
 */
const Gpus = z.array(z.string().regex(/^[A-Za-z0-9:._-]+$/, 'a GPU index, UUID or PCI bus id')).min(1);

export const PowerSpec = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('dcgm'),
    /** Each exporter's /metrics URL (several: a deployment over several nodes). */
    urls: z.array(z.string().min(1)).min(1),
    gpus: Gpus.optional(),
    /** Scrape period; the exporter's own collect interval (`-c`, 30 s by default) bounds how fresh values are. */
    interval_ms: z.int().positive().default(1000),
    /** A scrape that has not answered by then is given up (a hung exporter costs this much, once). */
    timeout_ms: z.int().positive().default(2000),
    expected_gpus: z.int().positive().optional(),
  }),
  z.strictObject({
    kind: z.literal('nvidia-smi'),
    executable: z.string().min(1).default('nvidia-smi'),
    gpus: Gpus.optional(),
    interval_ms: z.int().positive().default(200),
    expected_gpus: z.int().positive().optional(),
  }),
  z.strictObject({
    kind: z.literal('amd-smi'),
    executable: z.string().min(1).default('amd-smi'),
    gpus: Gpus.optional(),
    /** amd-smi is polled (one process per reading); each takes a fraction of a second. */
    interval_ms: z.int().positive().default(1000),
    expected_gpus: z.int().positive().optional(),
  }),
]);
export type PowerSpec = z.infer<typeof PowerSpec>;
export type PowerSpecInput = z.input<typeof PowerSpec>;

/**
 * One GPU's readings on the run's clock (seconds since its origin): a power gauge in watts, or an
 * energy counter in joules (DCGM's total energy, converted from millijoules).
 */
export interface GpuSeries {
  readonly gpu: string;
  readonly kind: 'power_w' | 'energy_j';
  readonly tS: readonly number[];
  readonly values: readonly number[];
}

export type PowerReading =
  | { readonly ok: true; readonly source: EnergySource; readonly series: readonly GpuSeries[] }
  | { readonly ok: false; readonly source: EnergySource; readonly reason: string };

/**
 * A power source over one load window: `start` before the first request (it resolves once the first
 * reading is in, or the source has failed), `stop` after the last answer (it takes a reading past that
 * instant, then releases the source). Neither throws: a source that fails yields a reading that says
 * why, and the run is measured all the same. `stop` may be called more than once (it answers the same).
 */
export interface PowerMeter {
  readonly source: EnergySource;
  start(clock: () => number): Promise<void>;
  stop(): Promise<PowerReading>;
}

/** Readings of one GPU as they arrive. */
export class SeriesBuilder {
  readonly #series = new Map<string, { tS: number[]; values: number[] }>();

  add(gpu: string, tS: number, value: number): void {
    let s = this.#series.get(gpu);
    if (s === undefined) {
      s = { tS: [], values: [] };
      this.#series.set(gpu, s);
    }
    s.tS.push(tS);
    s.values.push(value);
  }

  get size(): number {
    return this.#series.size;
  }

  /** GPUs with a reading at or after `tS`. */
  countSince(tS: number): number {
    let n = 0;
    for (const s of this.#series.values()) if ((s.tS[s.tS.length - 1] ?? -Infinity) >= tS) n++;
    return n;
  }

  build(kind: GpuSeries['kind']): GpuSeries[] {
    return [...this.#series.entries()].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true })).map(([gpu, s]) => ({ gpu, kind, tS: s.tS, values: s.values }));
  }
}

/** Why a sampler could not be started: the executable missing from PATH is the usual case. */
export function spawnFailure(executable: string, err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return `${executable} is not on PATH (no ${executable.includes('amd') ? 'AMD' : 'NVIDIA'} driver tools on this machine?)`;
  if (code === 'EACCES') return `${executable} cannot be executed (permission denied)`;
  return `${executable} could not be started: ${err instanceof Error ? err.message : String(err)}`;
}

/** The last characters of a tool's output, on one line, for a reason. */
export function tail(text: string, chars = 300): string {
  const t = text.trim().replace(/\s*\n\s*/g, ' | ');
  return t.length > chars ? `…${t.slice(-chars)}` : t;
}
