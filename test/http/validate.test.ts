import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { isLmBenchError } from '../../src/errors.js';
import { parseInput } from '../../src/http/validate.js';

const Body = z.strictObject({ gpus: z.int().positive(), server_config: z.strictObject({ max_num_seqs: z.int().positive().optional() }).optional(), files: z.array(z.strictObject({ name: z.string().min(1) })).optional() });

test('parseInput names every bad field of a request, the first one deciding code and details.field', () => {
  assert.throws(
    () => parseInput(Body, { gpus: 0, files: [{ name: '' }] }, 'body'),
    (err: unknown) =>
      isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') &&
      /^body\.gpus: .+; body\.files\[0\]\.name: .+$/.test(err.message) &&
      err.details['field'] === 'gpus' &&
      err.details['issues'] === 2,
  );
  assert.throws(
    () => parseInput(Body, { gpus: 1, server_config: { max_num_seq: 1 }, colour: 'blue' }, 'body'),
    (err: unknown) => isLmBenchError(err, 'LMB_ERR_UNKNOWN_KNOB') && /body\.server_config\.max_num_seq: unknown field/.test(err.message) && /body\.colour: unknown field/.test(err.message),
  );
});
