import { defaultCatalog } from '../../src/catalog/index.js';
import { Workload, type ServerConfig } from '../../src/domain/index.js';
import { buildFeatureRow, featureNames, type FeatureContext, type KnobEncoder } from '../../src/surrogate/features.js';
import type { SurrogateSpec, TrainingRow } from '../../src/surrogate/surrogate.js';
import type { CandidateSource } from '../../src/optimize/samplers.js';
import { createRng, type Rng } from '../../src/util/rng.js';
import { loadYamlFile } from '../../src/util/yaml.js';

/**
 * A three-knob toy world for model and optimizer tests: real catalog entries and the chat workload,
 * a test-only encoder of the three knobs, and a smooth synthetic response with noise.
 */
export const encoder: KnobEncoder = {
  featureNames: ['log2(max_num_seqs)', 'log2(max_num_batched_tokens)', 'gpu_memory_utilization'],
  encode: (c) => [Math.log2(c.max_num_seqs ?? 256), Math.log2(c.max_num_batched_tokens ?? 8192), c.gpu_memory_utilization ?? 0.9],
};

const catalog = defaultCatalog();
export const context: FeatureContext = {
  hardware: catalog.gpu('H100-SXM'),
  gpuCount: 1,
  model: catalog.model('llama-3.1-8b'),
  workload: loadYamlFile('data/workloads/chat.yaml', Workload),
};

export function randomConfig(rng: Rng): ServerConfig {
  return {
    max_num_seqs: 2 ** (3 + rng.int(7)),
    max_num_batched_tokens: 2 ** (10 + rng.int(5)),
    gpu_memory_utilization: Number((0.7 + rng.int(14) * 0.02).toFixed(2)),
  };
}

/** Synthetic truth: throughput saturates with max_num_seqs; TTFT grows with batch; start fails above 0.94. */
export function truth(c: ServerConfig): { tput: number; ttft: number; itl: number; started: boolean } {
  const s = c.max_num_seqs ?? 256;
  const b = c.max_num_batched_tokens ?? 8192;
  const tput = 4000 * (1 - Math.exp(-s / 48)) * (1 + 0.05 * Math.log2(b / 1024));
  return { tput, ttft: 40 + s * 0.9 + 2e5 / b, itl: 8 + s / 20, started: (c.gpu_memory_utilization ?? 0.9) <= 0.94 };
}

export function makeRows(n: number, seed: number): { rows: TrainingRow[]; configs: ServerConfig[] } {
  const rng = createRng(seed);
  const rows: TrainingRow[] = [];
  const configs: ServerConfig[] = [];
  for (let i = 0; i < n; i++) {
    const c = randomConfig(rng);
    const t = truth(c);
    const f = buildFeatureRow(c, context, encoder);
    const noise = (): number => Math.exp(0.03 * rng.normal());
    rows.push({
      x: f.row,
      baselines: f.baselines,
      targets: t.started ? { output_throughput_per_gpu: t.tput * noise(), output_throughput: t.tput * noise(), ttft_p99_ms: t.ttft * noise(), itl_p99_ms: t.itl * noise() } : {},
      started: t.started,
    });
    configs.push(c);
  }
  return { rows, configs };
}

export const names = featureNames(encoder);

export const source: CandidateSource = {
  sample: (n, rng) => Array.from({ length: n }, () => randomConfig(rng)),
  mutate: (c, rng) => {
    const s = Math.min(512, Math.max(8, (c.max_num_seqs ?? 256) * (rng.next() < 0.5 ? 2 : 0.5)));
    return { ...c, max_num_seqs: s };
  },
  encode: (c) => Array.from(encoder.encode(c)),
};

/** A small, quick surrogate for the toy world's three targets. */
export const TOY_SPEC: SurrogateSpec = {
  members: 3,
  xgb: { rounds: 40, maxDepth: 4, eta: 0.2, subsample: 1, colsampleBytree: 1 },
  feasibilityMembers: 1,
  targets: ['output_throughput_per_gpu', 'ttft_p99_ms', 'itl_p99_ms'],
  minRows: 8,
};
