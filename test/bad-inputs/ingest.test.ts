/**
 * The bad-input corpus, `lm-bench ingest PATH…`: files that must be rejected (one transaction per
 * file: a rejected file stores nothing), the 50 MB of junk made at test time, sidecars that are broken,
 * directories with nothing to ingest, and the two documented multi-file behaviours: the same file
 * twice adds nothing the second time and says so; valid and invalid files in one call store the valid
 * ones only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliCase } from './cli-harness.js';
import { dbFor, expand, judgeCli, runCliCase } from './cli-harness.js';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';
import { garbage, generatedInputs, writeLarge } from './generate.js';
import { flushVerdicts, formatVerdict, INGEST_FIXTURES, makeSandbox, record, stackProblems, tableCounts, verdict, type Problem, type Sandbox } from './harness.js';

const CTX = ['--set', 'max_num_seqs=128', '--gpu', 'H100-SXM', '--db', '$DB'];
const file = (id: string, path: string, code: NonNullable<CliCase['code']>, names: RegExp, ctx: readonly string[] = CTX): CliCase => ({ id, argv: ['ingest', path, ...ctx], code, names, json: true });
const REJECTED = 'LMB_ERR_INGEST_REJECTED';
const UNKNOWN = 'LMB_ERR_INGEST_UNKNOWN_FORMAT';
const MB50 = 50 * 1024 * 1024;

export const INGEST_CASES: readonly CliCase[] = [
  file('ingest-truncated-json', '$F/ingest-truncated.json', REJECTED, /ingest-truncated\.json: invalid JSON/),
  file('ingest-empty-file', '$F/ingest-empty.json', REJECTED, /ingest-empty\.json: .*empty/),
  file('ingest-unknown-keys', '$F/ingest-unknown-format.json', UNKNOWN, /ingest-unknown-format\.json: .*hello/),
  file('ingest-array-of-numbers', '$F/ingest-array.json', UNKNOWN, /ingest-array\.json: .*array/),
  file('ingest-null-document', '$F/ingest-null.json', UNKNOWN, /ingest-null\.json: /),
  file('ingest-nan-throughput', '$F/ingest-nan-throughput.json', REJECTED, /ingest-nan-throughput\.json: .*output_throughput/),
  file('ingest-infinite-duration', '$F/ingest-infinite-duration.json', REJECTED, /ingest-infinite-duration\.json: .*duration/),
  file('ingest-negative-infinite-ttft', '$F/ingest-negative-infinite-ttft.json', REJECTED, /ingest-negative-infinite-ttft\.json: .*p99_ttft_ms/),
  file('ingest-wrong-type', '$F/ingest-wrong-type.json', REJECTED, /ingest-wrong-type\.json: .*completed/),
  file('ingest-negative-count', '$F/ingest-negative-count.json', REJECTED, /ingest-negative-count\.json: .*completed/),
  file('ingest-missing-keys', '$F/ingest-missing-keys.json', REJECTED, /ingest-missing-keys\.json: .*output_throughput/),
  file('ingest-object-for-number', '$F/ingest-object-for-number.json', REJECTED, /ingest-object-for-number\.json: .*mean_ttft_ms/),
  file('ingest-huge-number', '$F/ingest-huge-number.json', REJECTED, /ingest-huge-number\.json: .*completed/),
  file('ingest-duplicate-key', '$F/ingest-duplicate-key.json', REJECTED, /ingest-duplicate-key\.json: line 20: key "output_throughput" appears twice in one object \(first on line 19\)/),
  file('ingest-jsonl-truncated-last-line', '$F/ingest-bad-last-line.jsonl', REJECTED, /ingest-bad-last-line\.jsonl: .*line 3/),
  file('ingest-jsonl-number-line', '$F/ingest-jsonl-wrong-line.jsonl', [UNKNOWN, REJECTED], /ingest-jsonl-wrong-line\.jsonl: .*line 2/),
  // YAML is a result format now: a broken one is rejected naming its line, a workload file is not a result.
  file('ingest-yaml-syntax', '$F/wl-syntax.yaml', REJECTED, /wl-syntax\.yaml: invalid YAML on line \d+/),
  file('ingest-yaml-not-a-result', '$F/wl-float-prompts.yaml', UNKNOWN, /wl-float-prompts\.yaml: document: no known key set/),
  /* Each format added in issue 26: a file cut off, and a file with a figure of the wrong type. */
  file('ingest-aiperf-truncated-json', '$F/ingest-aiperf-truncated.json', REJECTED, /ingest-aiperf-truncated\.json: invalid JSON/),
  file('ingest-aiperf-wrong-type-json', '$F/ingest-aiperf-wrong-type.json', REJECTED, /ingest-aiperf-wrong-type\.json: .*request_count\.avg/),
  file('ingest-aiperf-truncated-csv', '$F/ingest-aiperf-truncated.csv', REJECTED, /ingest-aiperf-truncated\.csv: .*line 12: 3 cells .*cut off/),
  file('ingest-aiperf-wrong-type-csv', '$F/ingest-aiperf-wrong-type.csv', REJECTED, /ingest-aiperf-wrong-type\.csv: .*line 22, Request Count: "four hundred thousand" is not a number/),
  file('ingest-genai-perf-truncated-json', '$F/ingest-genai-perf-truncated.json', REJECTED, /ingest-genai-perf-truncated\.json: invalid JSON/),
  file('ingest-genai-perf-wrong-type-json', '$F/ingest-genai-perf-wrong-type.json', REJECTED, /ingest-genai-perf-wrong-type\.json: .*time_to_first_token\.avg/),
  file('ingest-genai-perf-fractional-count', '$F/ingest-genai-perf-fractional-count.json', REJECTED, /ingest-genai-perf-fractional-count\.json: .*request_count\.avg 35\.5 is not a request count/),
  file('ingest-genai-perf-truncated-csv', '$F/ingest-genai-perf-truncated.csv', REJECTED, /ingest-genai-perf-truncated\.csv: .*line 5: .*cut off/),
  file('ingest-genai-perf-wrong-type-csv', '$F/ingest-genai-perf-wrong-type.csv', REJECTED, /ingest-genai-perf-wrong-type\.csv: .*line 13, Request Count \(count\): "three"/),
  file('ingest-guidellm-truncated-yaml', '$F/ingest-guidellm-truncated.yaml', REJECTED, /ingest-guidellm-truncated\.yaml: benchmarks\[0\]: metrics\.\w+: missing/),
  file('ingest-guidellm-wrong-type-yaml', '$F/ingest-guidellm-wrong-type.yaml', REJECTED, /ingest-guidellm-wrong-type\.yaml: benchmarks\[0\]: request_totals\.successful/),
  file('ingest-guidellm-truncated-csv', '$F/ingest-guidellm-truncated.csv', REJECTED, /ingest-guidellm-truncated\.csv: CSV line \d+: a quoted field is not closed/),
  file('ingest-guidellm-wrong-type-csv', '$F/ingest-guidellm-wrong-type.csv', REJECTED, /ingest-guidellm-wrong-type\.csv: .*line 4.*Request Counts \/ Successful: "two"/),
  file('ingest-sglang-truncated-jsonl', '$F/ingest-sglang-truncated.jsonl', REJECTED, /ingest-sglang-truncated\.jsonl: invalid JSON on line 3/),
  file('ingest-sglang-wrong-type-jsonl', '$F/ingest-sglang-wrong-type.jsonl', REJECTED, /ingest-sglang-wrong-type\.jsonl: line 2: completed/),
  file('ingest-inference-perf-truncated', '$F/ingest-inference-perf-truncated.json', REJECTED, /ingest-inference-perf-truncated\.json: invalid JSON/),
  file('ingest-inference-perf-wrong-type', '$F/ingest-inference-perf-wrong-type.json', REJECTED, /ingest-inference-perf-wrong-type\.json: .*successes\.count/),
  file('ingest-llm-d-br-truncated-yaml', '$F/ingest-llm-d-br-truncated.yaml', REJECTED, /ingest-llm-d-br-truncated\.yaml: .*no throughput and no latency/),
  file('ingest-llm-d-br-wrong-type-yaml', '$F/ingest-llm-d-br-wrong-type.yaml', REJECTED, /ingest-llm-d-br-wrong-type\.yaml: .*requests\.total/),
  file('ingest-mlenergy-truncated', '$F/ingest-mlenergy-truncated.json', REJECTED, /ingest-mlenergy-truncated\.json: invalid JSON/),
  file('ingest-mlenergy-wrong-type', '$F/ingest-mlenergy-wrong-type.json', REJECTED, /ingest-mlenergy-wrong-type\.json: configurations\[1\]: output_throughput_tokens_per_sec/),
  file('ingest-vllm-perf-table-truncated', '$F/ingest-vllm-perf-table-truncated.json', REJECTED, /ingest-vllm-perf-table-truncated\.json: invalid JSON/),
  file('ingest-vllm-perf-table-wrong-type', '$F/ingest-vllm-perf-table-wrong-type.json', REJECTED, /ingest-vllm-perf-table-wrong-type\.json: rows\[2\]: # of req\./),
  file('ingest-missing-path', '$F/no-such-result.json', 'LMB_ERR_FILE_NOT_FOUND', /no-such-result\.json/),
  file('ingest-lmb-knob-out-of-domain', '$F/ingest-lmb-bad-knob.json', [REJECTED, 'LMB_ERR_KNOB_OUT_OF_DOMAIN'], /ingest-lmb-bad-knob\.json: .*max_num_seqs/, ['--db', '$DB']),
  file('ingest-lmb-unknown-knob', '$F/ingest-lmb-unknown-knob.json', [REJECTED, 'LMB_ERR_UNKNOWN_KNOB'], /ingest-lmb-unknown-knob\.json: .*swap_space/, ['--db', '$DB']),
  file('ingest-lmb-unknown-gpu', '$F/ingest-lmb-unknown-gpu.json', ['LMB_ERR_INGEST_CONTEXT_MISSING', 'LMB_ERR_UNKNOWN_GPU'], /ingest-lmb-unknown-gpu\.json: .*TPU-v9/, ['--db', '$DB']),
  file('ingest-lmb-unknown-model', '$F/ingest-lmb-unknown-model.json', ['LMB_ERR_INGEST_CONTEXT_MISSING', 'LMB_ERR_UNKNOWN_MODEL'], /ingest-lmb-unknown-model\.json: .*gpt-9/, ['--db', '$DB']),
  file('ingest-lmb-zero-gpus', '$F/ingest-lmb-zero-gpus.json', REJECTED, /ingest-lmb-zero-gpus\.json: .*hardware\.count/, ['--db', '$DB']),
  file('ingest-no-context', '$FX/vllm-serve-legacy.json', 'LMB_ERR_INGEST_CONTEXT_MISSING', /vllm-serve-legacy\.json: .*server config/, ['--db', '$DB']),
  file('ingest-binary-garbage', '$T/garbage.json', UNKNOWN, /garbage\.json: .*binary/),
  file('ingest-invalid-utf8', '$T/latin1.json', UNKNOWN, /latin1\.json: .*UTF-8/),
  file('ingest-deep-nesting', '$T/deep.json', [UNKNOWN, REJECTED], /deep\.json: /),
  file('ingest-junk-50mb-binary', '$T/junk-50mb.json', [UNKNOWN, REJECTED], /junk-50mb\.json: /),
  file('ingest-junk-50mb-text', '$T/junk-50mb-text.json', [UNKNOWN, REJECTED], /junk-50mb-text\.json: .*JSON/),
  file('ingest-sidecar-syntax', '$T/sidecar-syntax/run.json', 'LMB_ERR_CONFIG_INVALID', /run\.json\.config\.yaml:\d+/, ['--gpu', 'H100-SXM', '--db', '$DB']),
  file('ingest-sidecar-unknown-knob', '$T/sidecar-knob/run.json', ['LMB_ERR_CONFIG_INVALID', 'LMB_ERR_UNKNOWN_KNOB'], /run\.json\.config\.yaml:\d+.*swap_space/, ['--gpu', 'H100-SXM', '--db', '$DB']),
  file('ingest-dir-sidecar-broken', '$T/dir-sidecar', 'LMB_ERR_CONFIG_INVALID', /lm-bench\.config\.yaml:\d+/, ['--gpu', 'H100-SXM', '--db', '$DB']),
  file('ingest-empty-directory', '$T/empty-dir', [UNKNOWN, 'LMB_ERR_FILE_NOT_FOUND', 'LMB_ERR_INVALID_ARGUMENT'], /empty-dir/),
  file('ingest-directory-nothing-ingestible', '$T/nothing-ingestible', [UNKNOWN, 'LMB_ERR_FILE_NOT_FOUND', 'LMB_ERR_INVALID_ARGUMENT'], /nothing-ingestible/),
  { id: 'ingest-text-mode-truncated', argv: ['ingest', '$F/ingest-truncated.json', ...CTX], code: REJECTED, names: /ingest-truncated\.json: invalid JSON/ },
  { id: 'ingest-text-mode-unknown-format', argv: ['ingest', '$F/ingest-unknown-format.json', ...CTX], code: UNKNOWN, names: /ingest-unknown-format\.json: / },
];

let sb: Sandbox;
before(() => {
  sb = makeSandbox('ingest');
  generatedInputs(sb.dir);
  const t = (p: string): string => join(sb.dir, p);
  writeFileSync(t('garbage.json'), garbage(256 * 1024, 7));
  writeFileSync(t('latin1.json'), Buffer.concat([Buffer.from('{"model_id": "caf'), Buffer.from([0xe9, 0xff, 0xfe]), Buffer.from('", "completed": 3}\n')]));
  writeFileSync(t('deep.json'), `${'['.repeat(200_000)}${']'.repeat(200_000)}\n`);
  writeLarge(t('junk-50mb.json'), MB50, garbage(1024 * 1024, 99));
  writeLarge(t('junk-50mb-text.json'), MB50, Buffer.from('lorem ipsum '.repeat(87_382)), '{"output_throughput": "');
  for (const [dir, sidecar] of [
    ['sidecar-syntax', 'max_num_seqs: 64\nserver_config: { block_size: 16\n'],
    ['sidecar-knob', 'max_num_seqs: 64\nswap_space: 4\n'],
  ] as const) {
    mkdirSync(t(dir));
    copyFileSync(join(INGEST_FIXTURES, 'vllm-serve-newest.json'), t(`${dir}/run.json`));
    writeFileSync(t(`${dir}/run.json.config.yaml`), sidecar);
  }
  mkdirSync(t('dir-sidecar/sub'), { recursive: true });
  writeFileSync(t('dir-sidecar/lm-bench.config.yaml'), 'gpu: H100-SXM\nserver_config: [max_num_seqs\n');
  copyFileSync(join(INGEST_FIXTURES, 'vllm-serve-newest.json'), t('dir-sidecar/sub/run.json'));
  mkdirSync(t('empty-dir'));
  mkdirSync(t('nothing-ingestible'));
  writeFileSync(t('nothing-ingestible/notes.txt'), 'not a result\n');
  writeFileSync(t('nothing-ingestible/summary.json'), '[]\n');
  writeFileSync(t('nothing-ingestible/results.csv'), 'a,b\n1,2\n');
});
after(() => {
  flushVerdicts('ingest');
  sb.cleanup();
});

interface IngestDoc {
  accepted?: number;
  skipped?: number;
  rejected?: { path: string; code: string; reason: string }[];
}

async function ingestJson(argv: readonly string[], db: string): Promise<{ exit: number; doc: IngestDoc | null; out: string; err: string }> {
  const io = captureIo(sb.dir, { LMB_DB: db, LMB_LOOPBACK_ONLY: '1' });
  const exit = await main([...expand(argv, sb, db), '--json'], io);
  let doc: IngestDoc | null = null;
  try {
    doc = JSON.parse(io.out()) as IngestDoc;
  } catch {
    doc = null;
  }
  return { exit, doc, out: io.out(), err: io.err() };
}

describe('bad inputs: ingest files', () => {
  for (const c of INGEST_CASES) {
    it(c.id, async () => {
      const v = judgeCli(c, await runCliCase(c, sb));
      record(v);
      assert.equal(v.category, 'clear', formatVerdict(v));
    });
  }

  it('ingest-duplicate-file', async () => {
    const db = dbFor({ id: 'dup', freshDb: true }, sb);
    const argv = ['ingest', '$FX/guidellm-v0.5.json', ...CTX];
    const first = await ingestJson(argv, db);
    const mid = tableCounts(db);
    const second = await ingestJson(argv, db);
    const end = tableCounts(db);
    // The text output says so too.
    const io = captureIo(sb.dir, { LMB_DB: db });
    const third = await main(expand(argv, sb, db), io);
    const problems: Problem[] = [...stackProblems(`${first.out}${first.err}${second.out}${second.err}${io.out()}${io.err()}`)];
    if (first.exit !== 0 || (first.doc?.accepted ?? 0) === 0) problems.push({ category: 'unclear', what: `the first ingest did not store the file (exit ${first.exit}, ${JSON.stringify(first.doc)})` });
    if (JSON.stringify(mid) !== JSON.stringify(end)) problems.push({ category: 'partial', what: `the second ingest of the same file changed rows: ${JSON.stringify(mid)} → ${JSON.stringify(end)}` });
    if (second.doc?.skipped !== first.doc?.accepted || second.doc?.accepted !== 0) problems.push({ category: 'unclear', what: `the second ingest does not report the runs as skipped: ${JSON.stringify(second.doc)}` });
    if (!/already stored/.test(io.out())) problems.push({ category: 'unclear', what: `the text summary does not say the runs were already stored: ${io.out()}` });
    if (JSON.stringify(tableCounts(db)) !== JSON.stringify(end)) problems.push({ category: 'partial', what: 'the third (text) ingest changed rows' });
    const v = verdict('ingest-duplicate-file', problems, `second: exit ${second.exit}, accepted ${second.doc?.accepted}, skipped ${second.doc?.skipped}; text exit ${third}`);
    record(v);
    assert.equal(v.category, 'clear', formatVerdict(v));
  });

  for (const order of ['valid-first', 'invalid-first'] as const) {
    const id = `ingest-mixed-valid-and-invalid-${order}`;
    it(id, async () => {
      const db = dbFor({ id, freshDb: true }, sb);
      const files = ['$FX/vllm-serve-append.jsonl', '$F/ingest-truncated.json'];
      const before = tableCounts(db);
      const r = await ingestJson(['ingest', ...(order === 'valid-first' ? files : [...files].reverse()), ...CTX], db);
      const afterCounts = tableCounts(db);
      const problems: Problem[] = [...stackProblems(`${r.out}${r.err}`)];
      // Documented: one transaction per file. The valid file's 2 runs are stored, the broken one stores nothing.
      if (r.exit !== 1) problems.push({ category: r.exit === 0 ? 'crash' : 'unclear', what: `exit ${r.exit}; a rejected file means exit 1` });
      const rej = r.doc?.rejected ?? [];
      if (rej.length !== 1 || !/ingest-truncated\.json$/.test(rej[0]?.path ?? '') || rej[0]?.code !== REJECTED) problems.push({ category: 'unclear', what: `the rejection does not name the broken file with ${REJECTED}: ${JSON.stringify(rej)}` });
      const want = { ...before, runs: (before?.['runs'] ?? 0) + 2 };
      if (JSON.stringify(afterCounts) !== JSON.stringify(want) || r.doc?.accepted !== 2) problems.push({ category: 'partial', what: `rows: expected ${JSON.stringify(want)} (the valid file's 2 runs), got ${JSON.stringify(afterCounts)}, accepted ${r.doc?.accepted}` });
      const v = verdict(id, problems, `exit ${r.exit}; accepted ${r.doc?.accepted}; rejected ${JSON.stringify(rej.map((x) => x.code))}`);
      record(v);
      assert.equal(v.category, 'clear', formatVerdict(v));
    });
  }
});
