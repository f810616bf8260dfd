import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { Workload, type WorkloadInput } from '../../src/domain/index.js';
import type { SpaceContext } from '../../src/space/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';

export const VLLM_SPACE = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
export const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'space');
export const fixture = (name: string): string => join(FIXTURES, name);

export function workloadFile(name: string): Workload {
  return loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', `${name}.yaml`), Workload);
}

export function ctxOf(gpu: string, gpuCount: number, model: string, workload: Workload | WorkloadInput = workloadFile('chat')): SpaceContext {
  const c = defaultCatalog();
  return { hardware: c.gpu(gpu), gpuCount, model: c.model(model), workload: Workload.parse(workload) };
}
