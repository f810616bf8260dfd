import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { Workload, type ServerConfig } from '../../src/domain/index.js';
import { scoreCandidates } from '../../src/optimize/candidates.js';
import { configKey } from '../../src/optimize/sampler.js';
import { spaceEncoder } from '../../src/optimize/space-source.js';
import { featureNames } from '../../src/surrogate/features.js';
import { priorSurrogate } from '../../src/surrogate/prior.js';
import { loadSpace } from '../../src/space/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';

/** The candidates a batch is chosen from hold each configuration once, however it is written. */
const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const encoder = spaceEncoder(space);
const context = { hardware: catalog.gpu('H100-SXM'), gpuCount: 1, model: catalog.model('llama-3.1-8b'), workload: loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload) };

test('two pool configurations vLLM resolves alike (a CUDA-graph size past max_num_batched_tokens) survive as one candidate; the always-scored are all kept', () => {
  const base: ServerConfig = { max_num_seqs: 512, max_num_batched_tokens: 512, block_size: 64, gpu_memory_utilization: 0.84, max_model_len: 4096 };
  const twoWays: ServerConfig[] = [{ ...base, max_cudagraph_capture_size: 1024 }, { ...base, max_cudagraph_capture_size: 512 }];
  assert.equal(configKey(twoWays[0] ?? {}, context), configKey(twoWays[1] ?? {}, context), 'one configuration');
  const others: ServerConfig[] = [{ max_num_seqs: 64 }, { max_num_seqs: 128 }, { max_num_seqs: 256 }];
  const scored = scoreCandidates([...twoWays, ...others], [{ max_num_seqs: 32 }], {
    surrogate: priorSurrogate([], featureNames(encoder)),
    context,
    encoder,
    constraints: [],
    targets: ['output_throughput_per_gpu'],
    keep: 10,
  });
  const keys = scored.configs.map((c) => configKey(c, context));
  assert.equal(new Set(keys).size, keys.length, JSON.stringify(scored.configs));
  assert.equal(scored.configs.length, 5, 'the always-scored one, one of the two spellings, the three others');
  assert.deepEqual(scored.configs[0], { max_num_seqs: 32 });
});
