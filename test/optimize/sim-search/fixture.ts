import { join } from 'node:path';
import { priorSimulator } from '../../../src/calibration/prior-simulator.js';
import { defaultCatalog, PROJECT_ROOT } from '../../../src/catalog/index.js';
import { Workload } from '../../../src/domain/index.js';
import { loadSpace } from '../../../src/space/index.js';
import { loadYamlFile } from '../../../src/util/yaml.js';

/** The deployment the simulated-search tests share: Llama-3.1-8B on one H100, chat traffic (200 prompts), the chat SLOs. */
export const catalog = defaultCatalog();
export const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
/** data/workloads/chat.yaml as shipped. */
export const chatWorkload = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);
export const workload = { ...chatWorkload, num_prompts: 200 };
export const slo = { ttft_p99_ms: 350, itl_p99_ms: 50 };
export const context = { hardware: catalog.gpu('H100-SXM'), gpuCount: 1, model: catalog.model('llama-3.1-8b'), workload };
export const sim = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo });
