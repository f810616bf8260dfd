import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainSection } from '../../../src/report/study/explain.js';
import type { StudyAnalysis } from '../../../src/report/study/types.js';
import type { StudyExplanation } from '../../../src/tune/explain-study.js';
import type { AttributionStep } from '../../../src/optimize/simplify.js';

/** “Why these flags” from a hand-made explanation: the section reads nothing else of the analysis. */
function withExplanation(x: StudyExplanation): StudyAnalysis {
  return { explanation: x } as unknown as StudyAnalysis;
}

const step = (knobs: AttributionStep['knobs'], figure: number): AttributionStep => ({
  knobs,
  figure,
  gain_pct: null,
  meets_slo: true,
  p99_ttft_ms: 200,
  p99_itl_ms: 20,
  source: 'predicted',
});

test('the flags are written as `vllm serve` takes them: a false boolean is --no-flag, never `--flag false`', () => {
  const pick = { tensor_parallel_size: 4, enable_prefix_caching: false, enable_chunked_prefill: true, enforce_eager: false, quantization: 'fp8' };
  const section = explainSection(
    withExplanation({
      simplification: {
        figure: 'output_throughput_per_gpu',
        tolerance_rel: 0.05,
        source: 'predicted',
        before: { changed: pick, figure: 760, meets_slo: true },
        after: { changed: { tensor_parallel_size: 4, quantization: 'fp8' }, figure: 740, meets_slo: true },
        reverted: [{ knob: 'enable_prefix_caching', pick_value: false, default_value: true, figure_change_pct: -1 }],
      },
      attribution: { figure: 'output_throughput_per_gpu', defaults: step({}, 500), steps: [step({ enable_prefix_caching: false }, 510)] },
      warnings: [],
      vllm_command: 'vllm serve m --tensor-parallel-size 4 --quantization fp8',
    }),
  );
  assert.ok(section !== null && section.kind === 'html');
  if (section?.kind !== 'html') return;
  // What `tune` prints for the same pick (optimize/simplify-text.ts), so the two can be pasted alike.
  assert.match(section.html, /<code>--tensor-parallel-size 4 --no-enable-prefix-caching --enable-chunked-prefill --quantization fp8<\/code>/);
  assert.match(section.html, /<code>\+ --no-enable-prefix-caching<\/code>/);
  assert.doesNotMatch(section.html, /--[a-z-]+ (true|false)\b/, 'no boolean flag takes a value');
});
