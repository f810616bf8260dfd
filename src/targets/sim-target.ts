import { resolveProfile } from '../calibration/profiles.js';
import type { Catalog } from '../catalog/index.js';
import type { Hardware, SimProfile } from '../domain/index.js';
import { simulate } from '../sim/index.js';
import type { Store } from '../store/store.js';
import type { TargetSpec } from './spec.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';

type SimSpec = Extract<TargetSpec, { kind: 'sim' }>;

/**
 * A sim target spec with its profile choice replaced by the profile itself, read from the store once
 * (trials run in worker threads, which have no store). Other targets pass through unchanged.
 */
export function bindSimProfile(spec: TargetSpec, store: Store, catalog: Catalog, hw: Hardware): TargetSpec {
  if (spec.kind !== 'sim' || typeof spec.profile === 'object') return spec;
  const { profile, source } = resolveProfile(store, catalog, hw, spec.profile ?? 'auto', spec.vllm_version);
  return { kind: 'sim', profile, profile_source: source, ...(spec.vllm_version === undefined ? {} : { vllm_version: spec.vllm_version }) };
}

/** The vLLM release a sim target imitates (undefined: a current one, and for any other target). */
export function simSpecRelease(spec: TargetSpec): string | undefined {
  return spec.kind === 'sim' ? spec.vllm_version : undefined;
}

/** The profile a bound spec carries; an unbound one prices with the catalog's. */
export function simSpecProfile(spec: SimSpec): SimProfile | undefined {
  return typeof spec.profile === 'object' ? spec.profile : undefined;
}

/**
 * The default target: the embedded simulator in virtual time. A configuration vLLM would refuse
 * fails as a launch failure with vLLM's message, exactly as a real `vllm serve` would.
 */
export function createSimTarget(opts: { catalog?: Catalog; now?: () => number; profile?: SimProfile | undefined; vllmVersion?: string | undefined } = {}): Target {
  const now = opts.now ?? Date.now;
  return {
    kind: 'sim',
    runTrial(input: TrialInput): Promise<TrialOutcome> {
      const t0 = now();
      const out = simulate({
        config: input.config,
        hardware: input.hardware,
        model: input.model,
        workload: input.workload,
        seed: input.seed,
        slo: input.slo,
        catalog: opts.catalog,
        profile: opts.profile,
        vllmVersion: opts.vllmVersion,
        startEpochMs: t0,
        // A trial keeps its result only (the store holds no request records, and lost requests and the
        // diagnosis are read from the result): no token's time is kept, the figures are the same
        // (test/sim/lean-metrics.test.ts, test/targets/sim-target.test.ts).
        keepRecords: false,
      });
      const durationMs = now() - t0;
      if (!out.ok) {
        const crashed = out.failure.phase === 'runtime';
        return Promise.resolve({
          status: 'failed',
          started: crashed,
          code: crashed ? 'LMB_ERR_SERVER_CRASHED' : 'LMB_ERR_STARTUP_FAILED',
          reason: `${out.failure.rule}: ${out.failure.message}`,
          durationMs,
        });
      }
      return Promise.resolve({ status: 'ok', result: out.result, durationMs });
    },
  };
}
