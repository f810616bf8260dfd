import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLmBenchError, type ErrorCode } from '../../src/errors.js';
import { parseRunFilter } from '../../src/export/run-filter.js';

// `--runs FILTER`: GET /v1/runs's filters as `key=value,…`; bad ones fail with the service's codes.

function fails(text: string, code: ErrorCode, message: RegExp): void {
  assert.throws(
    () => parseRunFilter(text),
    (err: unknown) => isLmBenchError(err, code) && message.test(err.message),
    `${text} → ${code}`,
  );
}

describe('parseRunFilter', () => {
  it("reads GET /v1/runs's keys, knob values typed as the query string's", () => {
    assert.deepEqual(parseRunFilter('all'), {});
    assert.deepEqual(parseRunFilter(' gpu=H100-SXM , model=llama-3.1-8b '), { gpu: 'H100-SXM', model: 'llama-3.1-8b' });
    assert.deepEqual(parseRunFilter('gpus=2,source_format=guidellm'), { gpus: 2, source_format: 'guidellm' });
    assert.deepEqual(parseRunFilter('config.max_num_seqs=128,config.enable_prefix_caching=false,config.kv_cache_dtype=fp8'), {
      config: { max_num_seqs: 128, enable_prefix_caching: false, kv_cache_dtype: 'fp8' },
    });
    assert.deepEqual(parseRunFilter('model=meta-llama/Llama-3.1-8B-Instruct'), { model: 'meta-llama/Llama-3.1-8B-Instruct' }, 'a / in a value is kept');
  });

  it('refuses malformed filters, naming the pair, with the codes GET /v1/runs uses for knobs', () => {
    fails('', 'LMB_ERR_INVALID_ARGUMENT', /empty/);
    fails('gpu', 'LMB_ERR_INVALID_ARGUMENT', /"gpu" is not key=value/);
    fails('gpu=', 'LMB_ERR_INVALID_ARGUMENT', /"gpu=" is not key=value/);
    fails('gpu=H100-SXM,,model=x', 'LMB_ERR_INVALID_ARGUMENT', /"" is not key=value/);
    fails('gpu=A,gpu=B', 'LMB_ERR_INVALID_ARGUMENT', /gpu given twice/);
    fails('hardware=H100', 'LMB_ERR_INVALID_ARGUMENT', /unknown key "hardware"; the keys are gpu, gpus, model, source_format, config.<knob>/);
    fails('gpus=0', 'LMB_ERR_INVALID_ARGUMENT', /gpus must be a positive integer, got "0"/);
    fails('gpus=1.5', 'LMB_ERR_INVALID_ARGUMENT', /gpus must be a positive integer/);
    fails('source_format=csv', 'LMB_ERR_INVALID_ARGUMENT', /source_format must be one of .*vllm_bench_serve.*got "csv"/);
    fails('config.max_seqs=4', 'LMB_ERR_UNKNOWN_KNOB', /config\.max_seqs: unknown knob "max_seqs"/);
    fails('config.max_num_seqs=-4', 'LMB_ERR_KNOB_OUT_OF_DOMAIN', /config\.max_num_seqs/);
    fails('config.enable_prefix_caching=maybe', 'LMB_ERR_KNOB_OUT_OF_DOMAIN', /config\.enable_prefix_caching/);
  });
});
