import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { Workload } from '../../src/domain/index.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/index.js';
import { loadSurrogateFor } from '../../src/surrogate/registry.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { seedTrainedDb } from '../http/helpers.js';

/**
 * The answers' tests' common ground: the shipped space and chat workload, and a history of 16 simulated
 * runs of llama-3.1-8b on one H100 with a surrogate trained on it, in a folder removed at exit.
 */
export const catalog = defaultCatalog();
export const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
export const chat = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);

export const dir = mkdtempSync(join(tmpdir(), 'lmb-advise-'));
const db = join(dir, 'h.db');
await seedTrainedDb(db, 16);
export const store = openStore(db);
export const loaded = loadSurrogateFor(store, { gpu: 'H100-SXM', model: 'llama-3.1-8b' });
process.on('exit', () => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});
