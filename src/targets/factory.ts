import { join } from 'node:path';
import type { Catalog } from '../catalog/index.js';
import { defaultCatalog } from '../catalog/index.js';
import type { BenchmarkResult } from '../domain/index.js';
import { assertNever } from '../errors.js';
import { runBenchmark } from '../loadgen/index.js';
import { createCommandTarget } from './command-target.js';
import { normalizeHarnessResult } from './harness-result.js';
import { createSimTarget } from './sim-target.js';
import type { TargetSpec } from './spec.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';
import { createVllmTarget } from './vllm-target.js';

/** The load runner against a started server: the workload's API decides the route. */
async function loadAgainst(baseUrl: string, model: string | undefined, input: TrialInput, signal?: AbortSignal): Promise<BenchmarkResult> {
  const route = input.workload.api === 'chat' ? '/v1/chat/completions' : '/v1/completions';
  const { result } = await runBenchmark({
    endpoint: `${baseUrl.replace(/\/+$/, '')}${route}`,
    model,
    workload: input.workload,
    seed: input.seed,
    slo: input.slo,
    signal,
  });
  return { ...result, server_config: input.config, hardware: input.hardware, model: input.model };
}

/** An already-running server: only the load side varies, so the trial's knobs are recorded, not applied. */
function createEndpointTarget(url: string, now: () => number): Target {
  const base = new URL(url);
  const baseUrl = `${base.protocol}//${base.host}`;
  return {
    kind: 'endpoint',
    async runTrial(input: TrialInput, signal?: AbortSignal): Promise<TrialOutcome> {
      const t0 = now();
      try {
        const result = await loadAgainst(baseUrl, undefined, input, signal);
        return { status: 'ok', result, durationMs: now() - t0 };
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        return { status: 'failed', started: true, code: 'LMB_ERR_ENDPOINT_UNREACHABLE', reason: why, durationMs: now() - t0 };
      }
    },
  };
}

export interface TargetDeps {
  readonly catalog?: Catalog;
  readonly now?: () => number;
}

/** Builds a target for parallel slot `slot` (the vllm target serves slot k on base_port + k). */
export function createTarget(spec: TargetSpec, slot: number, deps: TargetDeps = {}): Target {
  const now = deps.now ?? Date.now;
  const catalog = deps.catalog ?? defaultCatalog();
  switch (spec.kind) {
    case 'sim':
      return createSimTarget({ catalog, now });
    case 'vllm': {
      return {
        kind: 'vllm',
        runTrial(input, signal) {
          const servedModel = catalog.model(input.model).hf_name;
          const inner = createVllmTarget({
            executable: spec.executable,
            port: spec.base_port + slot,
            servedModel,
            startupTimeoutMs: spec.startup_timeout_ms,
            env: { ...process.env, ...spec.env },
            ...(spec.state_dir === undefined ? {} : { pidFile: join(spec.state_dir, `vllm-slot-${slot}.pid`) }),
            runLoad: (baseUrl, i, s) => loadAgainst(baseUrl, servedModel, i, s),
            now,
          });
          return inner.runTrial(input, signal);
        },
      };
    }
    case 'endpoint':
      return createEndpointTarget(spec.url, now);
    case 'command':
      return createCommandTarget({
        command: spec.command,
        timeoutMs: spec.timeout_ms,
        env: { ...process.env, ...spec.env },
        parseResult: normalizeHarnessResult,
        now,
      });
    default:
      return assertNever(spec, 'target kind');
  }
}
