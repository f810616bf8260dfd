import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { loadServiceConfig, resolveToken, ServiceConfig } from '../../src/http/config.js';
import { tokenMatches } from '../../src/http/auth.js';
import { tempDb } from './helpers.js';

test('the example service config loads: loopback, the sim profile, limits on', () => {
  const cfg = loadServiceConfig(join(PROJECT_ROOT, 'configs', 'service.example.yaml'));
  assert.equal(cfg.host, '127.0.0.1');
  assert.deepEqual(cfg.targets, { sim: { kind: 'sim' } });
  assert.ok(cfg.body_limit_bytes > 0 && cfg.rate_limit.max > 0);
  assert.equal(ServiceConfig.parse({}).host, '127.0.0.1', 'loopback by default');
});

test('a target profile with a command is only accepted from the config, validated as a TargetSpec', () => {
  const cfg = ServiceConfig.parse({ targets: { slurm: { kind: 'command', command: '/opt/run.sh' } } });
  assert.equal(cfg.targets['slurm']?.kind, 'command');
  assert.equal(ServiceConfig.safeParse({ targets: { bad: { kind: 'command', command: '' } } }).success, false);
});

test('the token comes from LMB_API_TOKEN, else the token file; short tokens are refused', (t) => {
  const dir = dirname(tempDb(t));
  const file = join(dir, 'token');
  writeFileSync(file, 'file-token-0123456789\n');
  assert.equal(resolveToken({ token_file: file }, {}), 'file-token-0123456789');
  assert.equal(resolveToken({ token_file: file }, { LMB_API_TOKEN: 'env-token' }), 'env-token');
  assert.equal(resolveToken({}, {}), null);
  writeFileSync(file, 'short\n');
  assert.throws(() => resolveToken({ token_file: file }, {}), (e) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID'));
  assert.throws(() => resolveToken({ token_file: join(dir, 'missing') }, {}), (e) => isLmBenchError(e, 'LMB_ERR_FILE_NOT_FOUND'));
  assert.equal(tokenMatches('abc', 'abc'), true);
  assert.equal(tokenMatches('abc', 'abcd'), false);
});

test('errors keep their catalog status; 5xx bodies hide message and details', async () => {
  const { LmBenchError } = await import('../../src/errors.js');
  const { asServiceError, errorBody } = await import('../../src/http/error-handler.js');
  const user = asServiceError(new LmBenchError('LMB_ERR_UNKNOWN_GPU', 'unknown GPU "x"', { details: { field: 'gpu' } }));
  assert.deepEqual([user.httpStatus, errorBody(user).error.details], [400, { field: 'gpu' }]);
  const bug = asServiceError(new Error('secret path /etc/x'));
  assert.equal(bug.code, 'LMB_ERR_INTERNAL');
  assert.equal(bug.httpStatus, 500);
  assert.doesNotMatch(JSON.stringify(errorBody(bug)), /secret/);
  const big = asServiceError(Object.assign(new Error('too big'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }));
  assert.deepEqual([big.code, big.httpStatus], ['LMB_ERR_BODY_TOO_LARGE', 413]);
});
