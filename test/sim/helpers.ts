import type { ServerConfig, Workload } from '../../src/domain/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { simulate } from '../../src/sim/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { Workload as WorkloadSchema } from '../../src/domain/index.js';

export const catalog = defaultCatalog();

export function workloadFile(name: string): Workload {
  return loadYamlFile(new URL(`../../data/workloads/${name}.yaml`, import.meta.url).pathname, WorkloadSchema);
}

export function fixed(input: number, output: number, arrival: Workload['arrival'], numPrompts: number): Workload {
  return { name: 'fixed', api: 'completions', input_len: { dist: 'fixed', value: input }, output_len: { dist: 'fixed', value: output }, arrival, num_prompts: numPrompts, ignore_eos: true };
}

/** A successful simulation's result, or a thrown assertion naming the start-up failure. */
// eslint-disable-next-line max-params -- reads like the CLI: gpu, count, model, knobs, workload, seed
export function run(gpu: string, count: number, model: string, config: ServerConfig, workload: Workload, seed = 1) {
  const out = simulate({ config, hardware: { gpu, count }, model, workload, seed, catalog });
  if (!out.ok) throw new Error(`unexpected start-up failure ${out.failure.rule}: ${out.failure.message}`);
  return out;
}
