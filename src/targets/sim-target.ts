import type { Catalog } from '../catalog/index.js';
import { simulate } from '../sim/index.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';

/**
 * The default target: the embedded simulator in virtual time. A configuration vLLM would refuse
 * fails as a launch failure with vLLM's message, exactly as a real `vllm serve` would.
 */
export function createSimTarget(opts: { catalog?: Catalog; now?: () => number } = {}): Target {
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
        startEpochMs: t0,
      });
      const durationMs = now() - t0;
      if (!out.ok) {
        return Promise.resolve({
          status: 'failed',
          started: false,
          code: 'LMB_ERR_STARTUP_FAILED',
          reason: `${out.failure.rule}: ${out.failure.message}`,
          durationMs,
        });
      }
      return Promise.resolve({ status: 'ok', result: out.result, durationMs });
    },
  };
}
