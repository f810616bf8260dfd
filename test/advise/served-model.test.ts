import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECKPOINT_PLACEHOLDER, unservableModelFile } from '../../src/advise/commands.js';
import type { Answer } from '../../src/advise/answer.js';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';
import { shellWords } from '../helpers/shell.js';

/**
 * A model named by a JSON file other than config.json (`--model ./my-model.json`): vLLM serves a
 * directory holding config.json and the weights, or a Hugging Face id, never that file's directory. The
 * commands the answer prints name a placeholder to replace, and say why; lm-bench's own commands name
 * the file, which lm-bench reads again. A checkpoint's directory (or its config.json) is served as it is.
 */

const FIXTURE = join(PROJECT_ROOT, 'test', 'fixtures', 'hf-configs', 'llama-3.2-1b.json');

async function recommend(cwd: string, model: string): Promise<Answer> {
  const io = captureIo(cwd);
  const code = await main(['recommend', '--gpu', 'H100-SXM', '--gpus', '1', '--model', model, '--workload', join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), '--db', join(cwd, 'none.db'), '--candidates', '400', '--json', '--offline'], io);
  assert.equal(code, 0, io.err());
  return JSON.parse(io.out()) as Answer;
}

/** Every `vllm serve` command of an answer, as argv. */
function serveCommands(a: Answer): string[][] {
  const all = [a.vllm_command, a.precision_keeping_command, ...a.measure_next.map((m) => m.vllm_serve), ...(a.nearest?.candidates ?? []).map((c) => c.vllm_command), ...(a.nearest?.changes ?? []).map((c) => c.vllm_command)];
  return all.filter((c): c is string => c !== null).map(shellWords);
}

test('`--model DIR/my-model.json`: the vllm commands name a placeholder to replace, never DIR; lm-bench commands name the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-served-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'my-model.json');
  writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(FIXTURE, 'utf8')) as object), _name_or_path: 'some-org/base-1b' }));
  const a = await recommend(dir, './my-model.json');
  const serves = serveCommands(a);
  assert.ok(serves.length > 0);
  for (const argv of serves) {
    assert.deepEqual(argv.slice(0, 3), ['vllm', 'serve', CHECKPOINT_PLACEHOLDER], argv.join(' '));
    assert.ok(!argv.includes(dir), argv.join(' '));
  }
  if (a.vllm_args !== null) assert.equal(a.vllm_args[1], CHECKPOINT_PLACEHOLDER);
  if (a.vllm_config_yaml !== null) assert.match(a.vllm_config_yaml, new RegExp(`^model: ${CHECKPOINT_PLACEHOLDER}$`, 'm'));
  assert.ok(a.warnings.some((w) => w.includes(file) && w.includes(CHECKPOINT_PLACEHOLDER)), JSON.stringify(a.warnings));
  // The file's own _name_or_path is offered, not served: it may name the base model these weights came from.
  assert.ok(a.warnings.some((w) => w.startsWith('the file\'s _name_or_path is "some-org/base-1b"')), JSON.stringify(a.warnings));
  // The study lm-bench would queue reads the model from the file again.
  if (a.enqueue_command !== null) {
    const argv = shellWords(a.enqueue_command);
    assert.equal(argv[argv.indexOf('--model') + 1], file);
  }
});

test('a checkpoint directory, or its config.json, is served as it is', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-served-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ckpt = join(dir, 'ckpt');
  mkdirSync(ckpt);
  copyFileSync(FIXTURE, join(ckpt, 'config.json'));
  const a = await recommend(dir, './ckpt');
  const serves = serveCommands(a);
  assert.ok(serves.length > 0);
  for (const argv of serves) assert.equal(argv[2], ckpt, argv.join(' '));
  assert.ok(!a.warnings.some((w) => w.includes(CHECKPOINT_PLACEHOLDER)));
  assert.equal(unservableModelFile({ hf_name: ckpt, source: join(ckpt, 'config.json') }), null);
  assert.equal(unservableModelFile({ hf_name: ckpt, source: join(ckpt, 'other.json') }), join(ckpt, 'other.json'));
  // A hub id or a catalog row is no file.
  assert.equal(unservableModelFile({ hf_name: 'meta-llama/Llama-3.2-1B', source: 'https://huggingface.co/meta-llama/Llama-3.2-1B/resolve/main/config.json (commit abc)' }), null);
});
