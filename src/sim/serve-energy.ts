import { energyOf, energyUnavailable, type Energy } from '../domain/index.js';
import type { EnergyTrace } from './energy.js';

/**
 * The energy of a long-lived simulated server (`sim serve`): what a DCGM exporter beside a real vLLM
 * would show, per GPU (power now, energy since start), and the load window's figures when it stops.
 * The replicas keep running totals only (a server may run for days), so the load window is read as the
 * requests come: the energy is snapshot at the first request and at every delivery of tokens, the last
 * of which ends the window.
 */
export class ServeEnergy {
  private firstRequestS: number | null = null;
  private energyAtFirstRequestJ = 0;
  private lastTokenS: number | null = null;
  private energyAtLastTokenJ = 0;
  private tokens = 0;
  private readonly traces: readonly EnergyTrace[];
  /** GPUs of the deployment no replica uses: they draw idle power (a DCGM exporter shows them too), as in `sim run`. */
  private readonly idleGpus: number;

  constructor(traces: readonly EnergyTrace[], idleGpus = 0) {
    this.traces = traces;
    this.idleGpus = idleGpus;
  }

  /** GPUs of the deployment (replicas × their tensor-parallel ranks, and the idle ones). */
  get gpus(): number {
    return this.traces.reduce((s, t) => s + t.power.gpusPerReplica, 0) + this.idleGpus;
  }

  private get idleW(): number {
    return this.traces[0]?.power.idleW ?? 0;
  }

  onRequest(nowS: number): void {
    if (this.firstRequestS !== null) return;
    this.firstRequestS = nowS;
    this.energyAtFirstRequestJ = this.totalJ(nowS);
  }

  onTokens(nowS: number, count: number): void {
    if (count <= 0) return;
    this.tokens += count;
    this.lastTokenS = nowS;
    this.energyAtLastTokenJ = this.totalJ(nowS);
  }

  /** Energy of every GPU since the engine started (idle included), J, at `atS` = now (the replicas keep no history). */
  totalJ(atS: number): number {
    let j = this.idleW * this.idleGpus * atS;
    for (const t of this.traces) j += t.power.idleW * t.power.gpusPerReplica * atS + t.upTo(atS).dynamicJ;
    return j;
  }

  /** Each GPU's power now (W) and energy since start (J), replica by replica, rank by rank (TP ranks draw alike). */
  perGpu(atS: number): { powerW: number; energyJ: number }[] {
    const out: { powerW: number; energyJ: number }[] = [];
    for (const t of this.traces) {
      const g = t.power.gpusPerReplica;
      const powerW = t.power.idleW + t.dynamicPowerW(atS) / g;
      const energyJ = t.power.idleW * atS + t.upTo(atS).dynamicJ / g;
      for (let i = 0; i < g; i++) out.push({ powerW, energyJ });
    }
    for (let i = 0; i < this.idleGpus; i++) out.push({ powerW: this.idleW, energyJ: this.idleW * atS });
    return out;
  }

  /** The load window's Energy block: first request received to last token delivered. */
  loadWindow(): Energy {
    const t0 = this.firstRequestS;
    const t1 = this.lastTokenS;
    if (t0 === null || t1 === null || !(t1 > t0)) return energyUnavailable('sim', this.gpus, 'no request was served');
    const energyJ = this.energyAtLastTokenJ - this.energyAtFirstRequestJ;
    return energyOf('sim', this.gpus, { start_s: t0, end_s: t1, rule: 'load' }, energyJ / (t1 - t0), this.tokens);
  }
}
