import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../../src/catalog/index.js';
import { configFromFlags } from '../../../src/cli/commands/sim.js';
import { isLmBenchError } from '../../../src/errors.js';
import { parseRunFilter } from '../../../src/export/run-filter.js';
import { openStore } from '../../../src/store/index.js';
import { AUTH, tempDb, testApp } from '../helpers.js';

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');

type Outcome = { ok: true; value: unknown } | { ok: false; code: string };

function outcome(fn: () => unknown): Outcome {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    assert.ok(isLmBenchError(err), `a catalog error, not ${String(err)}`);
    return { ok: false, code: err.code };
  }
}

/**
 * The same text for a knob means the same value to `GET /v1/runs?config.<knob>=` (the real app, over
 * loopback) as to the CLI's `--set` and vLLM-style flags and to `export --runs`: one coercion.
 */
test('GET /v1/runs?config.<knob>= and the CLI read a knob value alike', async (t) => {
  const app = await testApp(t, tempDb(t));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  // Two sets of stored runs whose configs differ in the knobs under test.
  const stored: { config: Record<string, unknown>; runs: number }[] = [];
  for (const [file, config] of [
    ['vllm-serve-2025.json', { enable_prefix_caching: true, max_num_seqs: 128 }],
    ['vllm-serve-append.jsonl', { enable_prefix_caching: false, max_num_seqs: 64 }],
  ] as const) {
    const res = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ files: [{ name: file, content: readFileSync(join(FIXTURES, file), 'utf8') }], server_config: config, gpu: 'H100-SXM', model: 'qwen2.5-7b' }),
    });
    const body = (await res.json()) as { accepted: number };
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.ok(body.accepted > 0);
    stored.push({ config, runs: body.accepted });
  }
  const matching = (knob: string, value: unknown): number => stored.filter((s) => s.config[knob] === value).reduce((n, s) => n + s.runs, 0);

  const cases: [string, string][] = [
    ...['true', 'True', 'TRUE', ' false ', 'False', '1', '0', 'yes', ''].map((raw): [string, string] => ['enable_prefix_caching', raw]),
    ...['128', ' 64', '+128', '1.28e2', '128.0', '100', '1.5', '-4', 'abc', '0x80', ''].map((raw): [string, string] => ['max_num_seqs', raw]),
    ...['fp8', 'FP8', 'auto'].map((raw): [string, string] => ['kv_cache_dtype', raw]),
  ];
  let accepted = 0;
  let refused = 0;
  for (const [knob, raw] of cases) {
    const what = `${knob}=${JSON.stringify(raw)}`;
    const cli = outcome(() => configFromFlags({ set: [`${knob}=${raw}`] })[knob as 'max_num_seqs']);
    const res = await fetch(`${base}/v1/runs?config.${knob}=${encodeURIComponent(raw)}`);
    const body = (await res.json()) as { total?: number; error?: { code: string; message: string } };
    if (cli.ok) {
      accepted++;
      assert.equal(res.status, 200, `${what}: the CLI reads ${JSON.stringify(cli.value)}, the route refused: ${JSON.stringify(body)}`);
      assert.equal(body.total, matching(knob, cli.value), `${what}: the route filtered on the value the CLI read (${JSON.stringify(cli.value)})`);
      if (raw.trim() !== '') assert.deepEqual(outcome(() => parseRunFilter(`config.${knob}=${raw}`).config?.[knob as 'max_num_seqs']), cli, `${what}: export --runs`);
    } else {
      refused++;
      assert.equal(res.status, 400, `${what}: the CLI refused it (${cli.code}), the route took it`);
      assert.equal(body.error?.code, cli.code, what);
      assert.match(body.error?.message ?? '', new RegExp(`config\\.${knob}`), `${what}: the message names the knob`);
    }
    // vLLM's own flag spelling (`sim run --max-num-seqs 128`) reads a numeric or choice value the same way.
    if (knob !== 'enable_prefix_caching') assert.deepEqual(outcome(() => configFromFlags({ [knob.replaceAll('_', '-')]: raw })[knob as 'max_num_seqs']), cli, `${what}: as a flag`);
  }
  assert.ok(accepted >= 8 && refused >= 8, `both sides exercised (${accepted} accepted, ${refused} refused)`);
});

test('POST /v1/runs of a run already stored under another context is rejected, unchanged, unless it says replace', async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db);
  const post = async (gpu: string, maxNumSeqs: number, replace?: boolean) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: {
        files: [{ name: 'vllm-serve-2025.json', content: readFileSync(join(FIXTURES, 'vllm-serve-2025.json'), 'utf8') }],
        server_config: { max_num_seqs: maxNumSeqs },
        gpu,
        model: 'llama-3.1-8b',
        ...(replace === undefined ? {} : { replace }),
      },
    });
    return { status: res.statusCode, body: res.json<{ accepted: number; skipped: number; replaced: number; files: { warnings: string[]; replaced_ids: number[] }[]; error?: { code: string; message: string } }>() };
  };
  const first = await post('A100-80GB', 128);
  assert.equal(first.status, 201, JSON.stringify(first.body));
  assert.equal(first.body.accepted, 1);
  const runs = async () => (await app.inject({ method: 'GET', url: '/v1/runs', headers: AUTH })).json<{ runs: { id: number; hardware: { gpu: string } }[] }>().runs;
  // The same figures under another GPU and knob: one of the two contexts is wrong, so nothing is kept silently.
  const again = await post('H100-SXM', 64);
  assert.equal(again.status, 400, JSON.stringify(again.body));
  assert.equal(again.body.error?.code, 'LMB_ERR_INGEST_REJECTED');
  assert.match(again.body.error?.message ?? '', /1× A100-80GB \(this ingest: 1× H100-SXM\).*max_num_seqs=128 \(this ingest: max_num_seqs=64\).*"replace": true/);
  assert.deepEqual((await runs()).map((r) => r.hardware.gpu), ['A100-80GB']);
  // The same context again is a plain duplicate.
  assert.equal((await post('A100-80GB', 128)).body.skipped, 1);
  // Asked to, the stored run takes the new context, keeping its id.
  const replaced = await post('H100-SXM', 64, true);
  assert.equal(replaced.status, 201, JSON.stringify(replaced.body));
  assert.equal(replaced.body.replaced, 1);
  assert.match(replaced.body.files[0]?.warnings.join('\n') ?? '', /replaced by this ingest's/);
  const after = await runs();
  assert.deepEqual(after.map((r) => r.hardware.gpu), ['H100-SXM']);
  assert.deepEqual(replaced.body.files[0]?.replaced_ids, [after[0]?.id]);
});

test('POST /v1/runs: figures given twice in one request under two contexts are refused without a replace hint, nothing stored', async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db);
  const content = readFileSync(join(FIXTURES, 'vllm-serve-2025.json'), 'utf8');
  const res = await app.inject({
    method: 'POST',
    url: '/v1/runs',
    headers: { ...AUTH, 'content-type': 'application/json' },
    payload: {
      files: [
        { name: 'a.json', content, sidecar_yaml: 'max_num_seqs: 128\n' },
        { name: 'b.json', content, sidecar_yaml: 'max_num_seqs: 64\n' },
      ],
      gpu: 'H100-SXM',
      model: 'llama-3.1-8b',
    },
  });
  assert.equal(res.statusCode, 400, res.body);
  const error = res.json<{ error: { code: string; message: string; details: { runs: number[] } } }>().error;
  assert.equal(error.code, 'LMB_ERR_INGEST_REJECTED');
  assert.deepEqual(error.details.runs, [], 'no stored run is named: none exists');
  assert.match(error.message, /Send each run once/);
  assert.doesNotMatch(error.message, /"replace": true/, 'replace would only pick the last copy');
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs', headers: AUTH })).json<{ total: number }>().total, 0);
});

test('POST /v1/runs keeps the content hash an lm-bench export carries, as the CLI does, so re-sending an export is recognised', async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db);
  const hash = 'ab'.repeat(32);
  const exported = { ...(JSON.parse(readFileSync(join(FIXTURES, 'vllm-serve-2025.json'), 'utf8')) as Record<string, unknown>), lm_bench_content_hash: hash };
  const res = await app.inject({
    method: 'POST',
    url: '/v1/runs',
    headers: { ...AUTH, 'content-type': 'application/json' },
    payload: { files: [{ name: 'export.json', content: JSON.stringify(exported) }], server_config: { max_num_seqs: 64 }, gpu: 'H100-SXM', model: 'llama-3.1-8b' },
  });
  assert.equal(res.statusCode, 201, res.body);
  await app.close();
  const store = openStore(db, { readonly: true });
  t.after(() => store.close());
  assert.deepEqual(store.listRuns().map((r) => r.content_hash), [hash]);
});
