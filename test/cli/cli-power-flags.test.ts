import { test } from 'node:test';
import assert from 'node:assert/strict';
import { powerSpecOfFlags } from '../../src/cli/power-flags.js';
import { isLmBenchError } from '../../src/errors.js';

test('--power-gpus naming a GPU twice is refused: the list’s length is the GPU count a missing reading is reported against', () => {
  for (const raw of ['0,0', '0,1,0', 'GPU-abc,GPU-abc']) {
    assert.throws(
      () => powerSpecOfFlags({ 'power-smi': 'nvidia', 'power-gpus': raw }, {}),
      (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /^--power-gpus names GPU \S+ twice/.test(err.message) && err.details['field'] === 'power-gpus',
      raw,
    );
  }
  assert.deepEqual(powerSpecOfFlags({ 'power-smi': 'nvidia', 'power-gpus': '0, 1' }, {})?.gpus, ['0', '1']);
});
