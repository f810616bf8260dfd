import { z } from 'zod';
import type { Energy, ServerConfig } from '../domain/index.js';
import { RawNum, buildResult, newDraft, parseRaw, put } from './draft.js';
import { rejected } from './json-text.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * ML.ENERGY Benchmark v3 leaderboard records (ml-energy/leaderboard `public/data/models/
 * <org>__<model>__<task>.json`): one model and task, one entry per `configurations[]` — vLLM kept
 * saturated at `max_num_seqs` on `num_gpus` GPUs with the parallelization given — each measured over a
 * steady-state window: output throughput, ITL median/p90/p95/p99, average GPU power and energy per
 * output token (Zeus, window energy ÷ tokens generated in it).
 * What is not in a record is unavailable, not guessed: request counts, duration, TTFT, TPOT, mean
 * ITL, token totals, the arrival process. The energy block keeps the stated figures (power is the
 * GPUs' sum over the window, as ML.ENERGY integrates all GPUs of the deployment); its window is
 * ML.ENERGY's, not on lm-bench's clock.
 */
const opt = RawNum.nullable().optional();
const Config = z.looseObject({
  max_num_seqs: z.int().positive(),
  max_num_batched_tokens: z.int().positive().nullable().optional(),
  num_gpus: z.int().positive(),
  gpu_model: z.string(),
  output_throughput_tokens_per_sec: RawNum,
  median_itl_ms: opt,
  p90_itl_ms: opt,
  p95_itl_ms: opt,
  p99_itl_ms: opt,
  avg_power_watts: opt,
  energy_per_token_joules: opt,
  parallelization: z
    .looseObject({ tensor_parallel: z.int().positive().optional(), data_parallel: z.int().positive().optional(), expert_parallel: z.int().positive().optional() })
    .nullable()
    .optional(),
});
const Record = z.looseObject({ model_id: z.string(), task: z.string(), weight_precision: z.string().optional(), configurations: z.array(z.unknown()).min(1) });

export function isMlenergyRecord(v: unknown): v is globalThis.Record<string, unknown> {
  return isObject(v) && typeof v['model_id'] === 'string' && typeof v['task'] === 'string' && Array.isArray(v['configurations']);
}

export function parseMlenergyRecord(raw: unknown): ParsedRun[] {
  const rec = parseRaw(Record, raw, 'record');
  return rec.configurations.map((c, i) => {
    const label = `configurations[${i}]`;
    const cfg = parseRaw(Config, c, label);
    const d = newDraft('linear', label);
    d.backend = 'vllm';
    d.endpoint_type = 'openai-chat';
    d.model_id = rec.model_id;
    d.label = `${rec.task} max_num_seqs=${cfg.max_num_seqs}`;
    put(d, 'output_throughput', cfg.output_throughput_tokens_per_sec);
    put(d, 'median_itl_ms', cfg.median_itl_ms ?? undefined);
    put(d, 'p90_itl_ms', cfg.p90_itl_ms ?? undefined);
    put(d, 'p95_itl_ms', cfg.p95_itl_ms ?? undefined);
    put(d, 'p99_itl_ms', cfg.p99_itl_ms ?? undefined);
    d.notes.push(`ML.ENERGY v3 record (${rec.task}): a steady-state window at max_num_seqs; counts, duration, TTFT, TPOT and mean ITL are not recorded`);
    const { result, meta } = buildResult(d);
    const par = cfg.parallelization;
    const serverConfig: ServerConfig = { max_num_seqs: cfg.max_num_seqs, tensor_parallel_size: par?.tensor_parallel ?? 1 };
    if ((par?.data_parallel ?? 1) > 1) serverConfig.data_parallel_size = par?.data_parallel;
    if ((par?.expert_parallel ?? 1) > 1) serverConfig.enable_expert_parallel = true;
    if (cfg.max_num_batched_tokens) serverConfig.max_num_batched_tokens = cfg.max_num_batched_tokens;
    const perToken = energyFigure(cfg.energy_per_token_joules, 'energy_per_token_joules', label);
    const power = energyFigure(cfg.avg_power_watts, 'avg_power_watts', label);
    const energy: Energy | undefined =
      perToken === null && power === null
        ? undefined
        : {
            source: 'ingest',
            gpus: cfg.num_gpus,
            window: null,
            avg_power_w: power,
            energy_j: null,
            energy_per_output_token_j: perToken,
            output_tokens_per_joule: perToken !== null && perToken > 0 ? 1 / perToken : null,
            unavailable_reason: null,
          };
    return {
      label,
      record: { model_id: rec.model_id, task: rec.task, configuration: c },
      result: energy === undefined ? result : { ...result, energy },
      meta,
      hints: { serverConfig, gpu: cfg.gpu_model, gpuCount: cfg.num_gpus, model: rec.model_id },
    };
  });
}

/**
 * A power or energy figure of a record, or null where it has none. The energy block is stored as it is
 * (it does not pass through the draft's checks), so NaN, ±Infinity or a negative figure would reach the
 * history as a measurement: the file is rejected naming it instead.
 */
function energyFigure(v: number | null | undefined, key: string, label: string): number | null {
  if (v === null || v === undefined) return null;
  if (!Number.isFinite(v) || v < 0) throw rejected(`${label}: ${key}: ${String(v)} is not a measurement (a finite number ≥ 0 is needed)`);
  return v;
}
