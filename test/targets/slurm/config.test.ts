import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlurmConfig } from '../../../src/targets/slurm/config.js';
import { isLmBenchError } from '../../../src/errors.js';
import { parseYaml } from '../../../src/util/yaml.js';

const BASE = 'partition: gpu\ntime_limit: "30"\nengine: vllm\nwork_dir: /shared/lmb\n';

test('vllm: and lm_bench: lines are split into argv when the file is read', () => {
  const ok = parseYaml(`${BASE}vllm: apptainer exec --nv "/images/vllm 0.11.sif" vllm\n`, SlurmConfig, { file: 'slurm.yaml' });
  assert.equal(ok.vllm, 'apptainer exec --nv "/images/vllm 0.11.sif" vllm', 'the string is kept as written');
});

test('a stray quote in vllm: or lm_bench: is LMB_ERR_CONFIG_INVALID naming the file, line and field', () => {
  for (const [line, at] of [[`vllm: apptainer exec "vllm.sif vllm`, /slurm\.yaml:5: vllm: unterminated "/], [`lm_bench: node 'bin/lm-bench.js`, /slurm\.yaml:5: lm_bench: unterminated '/]] as const) {
    assert.throws(
      () => parseYaml(`${BASE}${line}\n`, SlurmConfig, { file: 'slurm.yaml' }),
      (err: unknown) => isLmBenchError(err, 'LMB_ERR_CONFIG_INVALID') && at.test(err.message),
      line,
    );
  }
  // Two bad lines: both are named at once.
  assert.throws(
    () => parseYaml(`${BASE}vllm: vllm "x\nlm_bench: node 'y\n`, SlurmConfig, { file: 'slurm.yaml' }),
    (err: unknown) => isLmBenchError(err) && /:5: vllm: /.test(err.message) && /:6: lm_bench: /.test(err.message),
  );
});
