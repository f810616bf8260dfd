import { readFileSync } from 'node:fs';
import type { Catalog } from '../catalog/index.js';
import { defaultCatalog } from '../catalog/index.js';
import type { BenchmarkResult } from '../domain/index.js';
import { LmBenchError, assertNever } from '../errors.js';
import { runBenchmark, type Transport } from '../loadgen/index.js';
import type { PowerSpec } from '../loadgen/power/index.js';
import { createCommandTarget } from './command-target.js';
import { normalizeHarnessResult } from './harness-result.js';
import { slotPidFile } from './pid-files.js';
import { serverPowerSpec } from './power.js';
import { createSimTarget, simSpecProfile } from './sim-target.js';
import type { TargetSpec } from './spec.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';
import { createVllmTarget } from './vllm-target.js';
import { newPromptSalt } from '../util/salt.js';

/** How a trial's load run reads power: the source, and the environment its sampler runs in (PATH). */
export interface TrialPower {
  readonly spec: PowerSpec;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The power of a server started on this machine: its vendor's SMI tool, over its GPUs (targets/power.ts). */
export function localServerPower(catalog: Catalog, input: TrialInput, env: Readonly<Record<string, string | undefined>>): TrialPower {
  return { spec: serverPowerSpec(catalog.gpu(input.hardware.gpu).vendor, input.config, env), env };
}

/** The load runner against a started server: the workload's API decides the route. */
export async function loadAgainst(baseUrl: string, model: string | undefined, input: TrialInput, signal?: AbortSignal, how: { transport?: Partial<Transport>; power?: TrialPower; promptSalt?: string } = {}): Promise<BenchmarkResult> {
  const { transport, power, promptSalt } = how;
  const route = input.workload.api === 'chat' ? '/v1/chat/completions' : '/v1/completions';
  const { result } = await runBenchmark({
    endpoint: `${baseUrl.replace(/\/+$/, '')}${route}`,
    model,
    workload: input.workload,
    seed: input.seed,
    promptSalt,
    slo: input.slo,
    signal,
    transport,
    // The knobs the trial sets (a launched server runs them; an endpoint is told to): the diagnosis reads them.
    knownConfig: input.config,
    power: power?.spec,
    powerEnv: power?.env,
  });
  return { ...result, server_config: input.config, hardware: input.hardware, model: input.model };
}

type EndpointSpec = Extract<TargetSpec, { kind: 'endpoint' }>;

/** An already-running server: only the load side varies, so the trial's knobs are recorded, not applied. */
function createEndpointTarget(spec: EndpointSpec, now: () => number): Target {
  // The server outlives this study: a salt of the target's own keeps an earlier study's trials, which
  // drew the same seeds, from finding their prompts in its prefix cache.
  const promptSalt = newPromptSalt();
  const base = new URL(spec.url);
  const baseUrl = `${base.protocol}//${base.host}`;
  let caCertPem: string | null = null;
  if (spec.ca_cert !== undefined) {
    try {
      caCertPem = readFileSync(spec.ca_cert, 'utf8');
    } catch (err) {
      throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `endpoint target: ca_cert ${spec.ca_cert} cannot be read`, { cause: err, details: { field: 'ca_cert' } });
    }
  }
  return {
    kind: 'endpoint',
    async runTrial(input: TrialInput, signal?: AbortSignal): Promise<TrialOutcome> {
      const t0 = now();
      // Read at each trial: the key lives in the environment, never in the study's stored spec.
      const apiKey = process.env[spec.api_key_env] ?? null;
      try {
        const result = await loadAgainst(baseUrl, undefined, input, signal, { transport: { apiKey: apiKey === '' ? null : apiKey, caCertPem, insecure: spec.insecure }, promptSalt });
        return { status: 'ok', result, durationMs: now() - t0 };
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        const code = err instanceof LmBenchError ? err.code : 'LMB_ERR_ENDPOINT_UNREACHABLE';
        return { status: 'failed', started: true, code, reason: why, durationMs: now() - t0 };
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
      return createSimTarget({ catalog, now, profile: simSpecProfile(spec), vllmVersion: spec.vllm_version });
    case 'vllm': {
      return {
        kind: 'vllm',
        runTrial(input, signal) {
          const servedModel = catalog.model(input.model).hf_name;
          const env = { ...process.env, ...spec.env };
          const inner = createVllmTarget({
            executable: spec.executable,
            port: spec.base_port + slot,
            servedModel,
            startupTimeoutMs: spec.startup_timeout_ms,
            env,
            ...(spec.state_dir === undefined ? {} : { pidFile: slotPidFile(spec.state_dir, 'vllm', slot) }),
            // The server's own environment decides which GPUs it sees, so it decides which are sampled.
            runLoad: (baseUrl, i, s) => loadAgainst(baseUrl, servedModel, i, s, { power: localServerPower(catalog, i, env) }),
            now,
          });
          return inner.runTrial(input, signal);
        },
      };
    }
    case 'endpoint':
      return createEndpointTarget(spec, now);
    case 'command':
      return createCommandTarget({
        command: spec.command,
        timeoutMs: spec.timeout_ms,
        env: { ...process.env, ...spec.env },
        parseResult: normalizeHarnessResult,
        now,
        ...(spec.state_dir === undefined ? {} : { pidFile: slotPidFile(spec.state_dir, 'command', slot) }),
      });
    case 'slurm':
      // Slurm trials are jobs the controller follows on its main thread (createExecutor), never a worker's.
      throw new LmBenchError('LMB_ERR_INTERNAL', 'a slurm target runs through its executor, not a trial worker');
    default:
      return assertNever(spec, 'target kind');
  }
}
