import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Question } from '../../src/advise/answer.js';
import { contextWarnings } from '../../src/optimize/simplify.js';
import { formatAnswer } from '../../src/advise/text.js';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { Workload, type Slo } from '../../src/domain/index.js';
import { simulatedFor } from '../../src/http/recommend-core.js';
import { loadSpace } from '../../src/space/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';

// The demo deployment answered by the simulator (no history): the answer a user defends in a review.
const catalog = defaultCatalog();
const spacePath = join(PROJECT_ROOT, 'search-spaces/vllm.yaml');
const space = loadSpace(spacePath);
const workload = loadYamlFile(join(PROJECT_ROOT, 'data/workloads/chat.yaml'), Workload, 'LMB_ERR_WORKLOAD_INVALID');
const ask = (slo: Slo, over: Partial<Question> = {}) =>
  simulatedFor(null, spacePath, { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload, workloadRef: 'chat.yaml', slo, candidates: 3000, seed: 1, keepPrecision: false, ...over });

test('the simulated answer states the few flags that matter, each with its simulated gain from vLLM’s defaults', () => {
  const a = ask(workload.slo ?? {});
  assert.ok(a.best !== null && a.simplification !== null && a.attribution !== null);
  const s = a.simplification;
  const before = Object.keys(s.before.changed);
  const after = Object.keys(s.after.changed);
  assert.ok(after.length <= before.length && after.every((k) => before.includes(k)));
  assert.equal(s.reverted.length, before.length - after.length);
  // The flags the answer prints are the simplified ones, nothing vLLM sets by itself.
  assert.deepEqual(a.best.config, s.after.changed);
  for (const k of after) assert.ok(a.vllm_command?.includes(`--${k.replaceAll('_', '-')}`), `${k} in ${a.vllm_command ?? ''}`);
  // Within the tolerance of the search's pick, both simulated and meeting the SLOs.
  assert.equal(s.source, 'simulated');
  assert.ok(s.after.meets_slo && (s.after.figure ?? 0) >= (s.before.figure ?? 0) * (1 - s.tolerance_rel));
  // The path starts at the defaults and ends at the simplified pick's figure, one flag a step.
  const steps = a.attribution.steps;
  assert.deepEqual(steps.flatMap((st) => Object.keys(st.knobs)).sort(), [...after].sort());
  assert.equal(steps.at(-1)?.figure, s.after.figure);
  for (const st of steps) assert.equal(st.source, 'simulated');
  const text = formatAnswer(a);
  assert.match(text, /Why each flag \(from vLLM's defaults/);
  assert.match(text, /vLLM defaults +\d+ tok\/s\/GPU/);
  assert.equal(a.nearest, null, 'a pick: nothing to be near to');
});

test('a max_model_len below the model’s own says why (the longest request) and that longer ones are refused', () => {
  const model = catalog.model('llama-3.1-8b');
  assert.deepEqual(contextWarnings({ max_model_len: model.native_context }, model, workload), []);
  assert.deepEqual(contextWarnings({}, model, workload), []);
  const [w] = contextWarnings({ max_model_len: 2048 }, model, workload);
  assert.match(w ?? '', /max_model_len 2048 is below the model's own 131072: the workload's longest request is \d+ tokens .* refuse any request whose prompt and answer exceed 2048 tokens/);
});

test('when nothing meets the SLOs the answer shows the nearest, what each would meet, and changes that make one meet them', () => {
  const slo = { ttft_p99_ms: 60, itl_p99_ms: 12 };
  const a = ask(slo);
  assert.equal(a.best, null);
  assert.ok(a.nearest !== null && a.nearest.candidates.length >= 1);
  const first = a.nearest.candidates[0];
  assert.ok(first !== undefined);
  for (const m of first.misses) assert.ok(m.predicted > m.limit && (first.would_meet[m.slo] ?? 0) >= m.predicted);
  const relax = a.nearest.changes.find((c) => c.kind === 'relax_slo');
  assert.ok(relax !== undefined, 'relaxing the SLO to the nearest one’s figures always works');
  assert.deepEqual(relax.slo, first.would_meet);
  // Every change that is offered was checked: its configuration meets its SLO on its GPU count.
  for (const c of a.nearest.changes.filter((x) => x.kind !== 'relax_slo')) {
    assert.equal(c.source, 'simulated');
    assert.ok(c.gpus > 1 || c.kind === 'accept_fp8');
    assert.ok(space.isFeasible(c.config, { hardware: catalog.gpu('H100-SXM'), gpuCount: c.gpus, model: catalog.model('llama-3.1-8b'), workload }).ok);
  }
  assert.match(formatAnswer(a), /Nearest \(what each would meet instead\)/);
});
