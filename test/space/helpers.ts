import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/**
 * An edited copy of the shipped space, as a user would make one (`tune --space FILE`): `from` replaced
 * by `to`, written under a fresh folder named by `prefix`. The test fails if the shipped file no
 * longer holds `from`, so an edit never silently tests the unedited space.
 */
export function spaceEditor(prefix: string): (name: string, from: string, to: string) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const shipped = readFileSync(VLLM_SPACE, 'utf8');
  return (name, from, to) => {
    assert.ok(shipped.includes(from), `the shipped space no longer holds ${from}`);
    const file = join(dir, name);
    writeFileSync(file, shipped.replace(from, to));
    return file;
  };
}
