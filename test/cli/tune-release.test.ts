import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { captureIo } from '../helpers/cli.js';

// `tune --vllm-version V`: the release a sim study imitates, kept by the study, real SQLite file, real trials.

const WORKLOAD = `name: long
api: completions
input_len: { dist: fixed, value: 4096 }
output_len: { dist: fixed, value: 256 }
arrival: { kind: closed, concurrency: 32 }
num_prompts: 96
ignore_eos: true
`;

test('tune --vllm-version: a sim study imitates that release and keeps it; another on resume is refused; a real target refuses the flag', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-release-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'long.yaml'), WORKLOAD);
  const db = join(dir, 'h.db');
  const tune = (study: string, extra: string[]) => ['tune', '--study', study, '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'long.yaml', '--budget-trials', '1', '--sampler', 'random', '--seed', '1', '--no-report', '--db', db, '--json', ...extra];
  for (const [study, extra] of [['old', ['--vllm-version', '0.12.0']], ['current', []]] as const) {
    const io = captureIo(dir);
    assert.equal(await main(tune(study, [...extra]), io), 0, io.err());
  }
  const read = (name: string) => {
    const s = openStore(db, { readonly: true });
    try {
      const study = s.findStudy(name);
      assert.ok(study !== null);
      const defaults = s.listTrials(study.id).find((tr) => tr.origin === 'default');
      assert.ok(defaults?.result !== null && defaults?.result !== undefined, name);
      return { target: TargetSpec.parse(JSON.parse(study.spec.target)), tpotMs: defaults.result.mean_tpot_ms };
    } finally {
      s.close();
    }
  };
  const old = read('old');
  const current = read('current');
  assert.ok(old.target.kind === 'sim' && current.target.kind === 'sim');
  assert.equal(old.target.vllm_version, '0.12.0');
  assert.equal(current.target.vllm_version, undefined);
  assert.match(old.target.profile_source ?? '', /vLLM 0\.12\.0/);
  // 4k-token contexts: vLLM 0.12's decode steps paid more for the KV read than a current release's.
  assert.ok(old.tpotMs > current.tpotMs * 1.05, `TPOT on 0.12.0 ${old.tpotMs} ms vs current ${current.tpotMs} ms`);

  const conflict = captureIo(dir);
  assert.equal(await main(['tune', '--study', 'old', '--db', db, '--vllm-version', '0.15.1'], conflict), 2);
  assert.match(conflict.err(), /LMB_ERR_STUDY_EXISTS.*--vllm-version 0\.15\.1 \(the study imitates vLLM 0\.12\.0\)/);
  // The whole command again with another release: refused the same way, nothing run.
  const full = captureIo(dir);
  assert.equal(await main(tune('old', ['--vllm-version', '0.15.1']), full), 2);
  assert.match(full.out(), /LMB_ERR_STUDY_EXISTS[\s\S]*--vllm-version 0\.15\.1 \(the study imitates vLLM 0\.12\.0\)/);
  const unversioned = captureIo(dir);
  assert.equal(await main(tune('current', ['--vllm-version', '0.12.0']), unversioned), 2);
  assert.match(unversioned.out(), /--vllm-version 0\.12\.0 \(the study imitates a current vLLM\)/);
  // Without the flag the whole command resumes the study at its own release.
  const kept = captureIo(dir);
  assert.equal(await main(tune('old', []), kept), 0, kept.err() + kept.out());
  const resumed = read('old').target;
  assert.equal(resumed.kind === 'sim' ? resumed.vllm_version : null, '0.12.0');
  const same = captureIo(dir);
  assert.equal(await main(['tune', '--study', 'old', '--db', db, '--vllm-version', '0.12.0', '--json'], same), 0, same.err());

  const real = captureIo(dir);
  assert.equal(await main(tune('real', ['--target', 'endpoint', '--endpoint', 'http://127.0.0.1:9/v1/completions', '--vllm-version', '0.12.0']), real), 2);
  const realError = (JSON.parse(real.out()) as { error: { code: string; message: string; details: { field: string } } }).error;
  assert.deepEqual([realError.code, realError.details.field], ['LMB_ERR_INVALID_ARGUMENT', 'vllm-version']);
  assert.match(realError.message, /^--vllm-version names the release the simulator imitates \(--target sim\); --target endpoint measures a server that runs its own/);
  const bad = captureIo(dir);
  assert.equal(await main(tune('bad', ['--vllm-version', 'soon']), bad), 2);
  assert.match(bad.out(), /"LMB_ERR_INVALID_ARGUMENT"[\s\S]*--vllm-version must be a vLLM release such as 0\.15\.1, got \\"soon\\"/);
  const s = openStore(db, { readonly: true });
  try {
    assert.equal(s.findStudy('real'), null, 'a refused study stores nothing');
    assert.equal(s.findStudy('bad'), null);
  } finally {
    s.close();
  }
});
