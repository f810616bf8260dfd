import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';

// `--model=` was read as the path "", the working directory: the error named a folder never typed.
test('an empty --model is said to be empty, not taken for the working directory', async () => {
  for (const argv of [
    ['models', 'show', ''],
    ['models', 'show', '  '],
    ['sim', 'run', '--gpu', 'H100', '--gpus', '1', '--model=', '--input-len', '8', '--output-len', '4'],
  ]) {
    const io = captureIo(process.cwd(), { LMB_DB: '/nonexistent/lmb-cli-model-flag.db', HF_HUB_OFFLINE: '1' });
    assert.equal(await main(argv, io), 2, argv.join(' '));
    assert.match(io.err(), /^lm-bench: error LMB_ERR_UNKNOWN_MODEL: the model name is empty: give a catalog id/, argv.join(' '));
    assert.doesNotMatch(io.err(), /without a config\.json/);
  }
});
