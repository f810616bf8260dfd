import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { command } from '../../src/cli/commands/model.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';

// `lm-bench model show X` (singular) is `models show X` mistyped: the deprecated `model` alias of
// `surrogate` answered "unknown subcommand "model show"" after a note about train|eval.

test('model show MODEL points at `models show MODEL`, without the surrogate deprecation note', async () => {
  const io = captureIo(tmpdir());
  await assert.rejects(
    Promise.resolve().then(() => command.run(['show', 'llama-3.1-8b'], io)),
    (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && e.message.includes('`lm-bench models show llama-3.1-8b`'),
  );
  assert.equal(io.err(), '');
});
