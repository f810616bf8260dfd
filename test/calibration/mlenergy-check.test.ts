import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mlenergyCheck, mlenergyRowsTable, mlenergySection } from '../../src/calibration/mlenergy-check.js';
import { parseMlenergy } from '../../src/calibration/mlenergy.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { PowerProfile, SimProfile } from '../../src/domain/index.js';
import { simulateSummary, type SimulateInput } from '../../src/sim/index.js';

const DATA = fileURLToPath(new URL('../../data/calibration/mlenergy/qwen3_lm_arena_chat.csv', import.meta.url));
const catalog = defaultCatalog();
// The simulator itself, on this thread (calibration spreads the same calls over worker threads).
const pool = {
  summaries: (points: readonly Omit<SimulateInput, 'catalog'>[], profiles: readonly SimProfile[]) =>
    Promise.resolve(
      profiles.map((profile) =>
        points.map((p) => {
          const out = simulateSummary({ ...p, catalog, profile });
          return out.ok ? out.summary : null;
        }),
      ),
    ),
};
const power: PowerProfile = { idle_tdp_frac: 0.14, busy_weight: 0, compute_weight: 0, memory_weight: 0 };
// The smallest H100 sweeps of a dense model on one GPU and of the MoE model on two with expert parallelism.
const all = parseMlenergy(readFileSync(DATA, 'utf8'), 'qwen3_lm_arena_chat.csv');
const rows = all.filter((r) => r.gpu === 'H100' && r.max_num_seqs === 8 && ((r.model_id.includes('Qwen3-14B') && r.num_gpus === 1) || (r.model_id.includes('30B-A3B') && r.num_gpus === 2)));

test('the held-out ML.ENERGY check simulates every row the catalog knows and reports its error by model and GPU', async () => {
  assert.equal(rows.length, 2, 'one dense and one MoE row');
  const c = await mlenergyCheck({ rows, catalog, pool, profile: catalog.profile, power });
  assert.equal(c.results.length, 2);
  assert.deepEqual(c.results.map((r) => [r.point.model, r.dense]).sort(), [['qwen3-14b', true], ['qwen3-30b-a3b', false]]);
  for (const r of c.results) assert.ok(r.pred !== null && r.pred.outputThroughput > 0, `${r.point.model} reached its window`);
  const section = mlenergySection(c);
  // Each line's MAPE is the rows' own error, recomputed here from the predictions.
  for (const r of c.results) {
    const t = `${(Math.abs((r.pred?.outputThroughput ?? NaN) / r.point.row.output_throughput_tok_s - 1) * 100).toFixed(1)}%`;
    assert.ok(section.includes(`| ${r.point.model} | H100 | 1 | ${t} | `), `${r.point.model}: ${t}\n${section}`);
  }
  assert.match(section, /\| \*\*all dense\*\* \| \| 1 \|/);
  // The prompt-length sensitivity reruns the dense rows at two other lengths.
  assert.equal(c.sensitivity.length, 2);
  assert.match(section, /Sensitivity to the assumed prompt lengths: prompts of mean 150 tokens: throughput MAPE \d+\.\d%/);
  const table = mlenergyRowsTable(c, [null, null]).split('\n');
  assert.equal(table.length, 2 + 2, 'a header, its rule and a line per row');
  assert.ok(table.some((l) => l.startsWith('| qwen3-30b-a3b | H100 | 2 + EP | 8 |')), table.join('\n'));
});
