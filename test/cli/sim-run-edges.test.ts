import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { captureIo, type CapturedIo } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-edges-'));
const io = (): CapturedIo => captureIo(dir);
const base = ['sim', 'run', '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--db', join(dir, 'h.db'), '--seed', '1'];

test('sim run --burstiness without --request-rate is refused, with --concurrency too (a closed loop has no arrival shape)', async () => {
  for (const extra of [[], ['--concurrency', '4']]) {
    const t = io();
    assert.equal(await main([...base, '--input-len', '64', '--output-len', '8', '--num-prompts', '8', '--burstiness', '0.5', ...extra], t), 2, extra.join(' '));
    assert.match(t.err(), /LMB_ERR_INVALID_ARGUMENT: --burstiness needs --request-rate/);
  }
  const ok = io();
  assert.equal(await main([...base, '--input-len', '64', '--output-len', '8', '--num-prompts', '8', '--request-rate', '4', '--burstiness', '0.5', '--concurrency', '4', '--json'], ok), 0, ok.err());
  const r = JSON.parse(ok.out()) as { burstiness: number; max_concurrency: number };
  assert.equal(r.burstiness, 0.5);
  assert.equal(r.max_concurrency, 4);
});

test('sim run: a burst of equal requests is served first come, first served (--requests-out in send order)', async () => {
  const out = join(dir, 'burst.jsonl');
  const t = io();
  assert.equal(await main([...base, '--input-len', '100', '--output-len', '20', '--num-prompts', '24', '--max-num-seqs', '8', '--requests-out', out], t), 0, t.err());
  const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { request_id: string; ttft_ms: number });
  assert.equal(lines.length, 24);
  // Requests 0–7 take the first batch, 8–15 the second, 16–23 the third: TTFT never falls with the send order.
  for (let i = 1; i < lines.length; i++) assert.ok((lines[i]?.ttft_ms ?? 0) >= (lines[i - 1]?.ttft_ms ?? 0), `request ${i} before ${i - 1}`);
  assert.ok((lines[23]?.ttft_ms ?? 0) > 2 * (lines[7]?.ttft_ms ?? 0));
});

test('sim run prints the max_num_seqs it ran with: vLLM lowers an unset one to --max-num-batched-tokens', async () => {
  const t = io();
  assert.equal(await main([...base, '--input-len', '256', '--output-len', '8', '--num-prompts', '20', '--max-num-batched-tokens', '100'], t), 0, t.err());
  assert.match(t.out(), /Max num seqs \/ batched tokens:\s+100 \/ 100\n/);
  // Set both and vLLM refuses fewer tokens than sequences (C6), as the simulator does.
  const refused = io();
  assert.equal(await main([...base, '--input-len', '256', '--output-len', '8', '--num-prompts', '20', '--max-num-batched-tokens', '100', '--max-num-seqs', '256'], refused), 3);
  assert.match(refused.err(), /C6 \(validation\): max_num_batched_tokens \(100\) must be greater than or equal to max_num_seqs \(256\)/);
});

test('sim run --requests-out/--records that cannot be written: the user’s error with the flag, a folder refused before the run', async () => {
  const folder = io();
  assert.equal(await main([...base, '--input-len', '64', '--output-len', '4', '--num-prompts', '4', '--requests-out', dir], folder), 2);
  assert.match(folder.err(), /LMB_ERR_INVALID_ARGUMENT: --requests-out .*: cannot write there \(it is a folder; name a file\)/);
  const file = join(dir, 'plain');
  writeFileSync(file, 'x');
  const under = io();
  assert.equal(await main([...base, '--input-len', '64', '--output-len', '4', '--num-prompts', '4', '--records', join(file, 'r.jsonl')], under), 2);
  assert.match(under.err(), /LMB_ERR_INVALID_ARGUMENT: --records .*r\.jsonl: cannot write there/);
  assert.doesNotMatch(under.err(), /LMB_ERR_INTERNAL/);
});
