import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFile, type ParsedRun } from '../../src/ingest/index.js';
import { readFileSync } from 'node:fs';
import { fixtureBytes } from './helpers.js';

// Ingest keeps power where a file states it — an AIPerf export's GPU telemetry, an lm-bench result's
// own block — as it is stated, and gives none where a file has none.
// Kept beside the power stand-ins, not among the ingest fixtures a folder walk counts.
const aiperfBytes = readFileSync(new URL('../fixtures/power/profile_export_aiperf.json', import.meta.url));
const aiperf = (): Record<string, unknown> => JSON.parse(aiperfBytes.toString('utf8')) as Record<string, unknown>;
const run = (doc: unknown): ParsedRun => parseFile('x.json', new TextEncoder().encode(JSON.stringify(doc))).runs[0] as ParsedRun;

describe('ingest: power a file states', () => {
  it('AIPerf --gpu-telemetry: total energy, average power, J per output token and the GPU count', () => {
    const f = parseFile('profile_export_aiperf.json', aiperfBytes);
    assert.equal(f.format, 'aiperf', 'schema_version and aiperf_version: read as AIPerf, not genai-perf');
    const r = f.runs[0] as ParsedRun;
    assert.deepEqual(r.result.energy, {
      source: 'ingest',
      gpus: 2,
      window: null,
      avg_power_w: 700,
      energy_j: 14000,
      energy_per_output_token_j: 0.7,
      output_tokens_per_joule: 1.4285714285714286,
      unavailable_reason: null,
    });
    assert.ok(r.meta.notes.some((n) => n === 'energy from AIPerf GPU telemetry (nvidia, 2 GPUs)'));
    assert.equal(r.result.completed, 100, 'the rest of the export reads as before');
  });

  it('AIPerf without the totals: the per-GPU average powers summed, no energy invented', () => {
    const doc = aiperf();
    for (const k of Object.keys(doc)) if (k.startsWith('nvidia_')) delete doc[k];
    const e = run(doc).result.energy;
    assert.equal(e?.avg_power_w, 703.5);
    assert.equal(e?.energy_j, null);
    assert.equal(e?.energy_per_output_token_j, null);
    assert.equal(e?.gpus, 2);
  });

  it('AIPerf on AMD GPUs (amd_* names), and an export without telemetry has no energy', () => {
    const doc = aiperf();
    for (const k of Object.keys(doc)) if (k.startsWith('nvidia_')) delete doc[k];
    doc['amd_total_gpu_energy'] = { unit: 'J', avg: 9000 };
    doc['amd_output_tokens_per_joule'] = { unit: 'tokens/J', avg: 2 };
    doc['telemetry_data'] = { endpoints: { local: { gpus: { gpu_0: { gpu_index: 0, platform: 'amd', metrics: { amd_power: { unit: 'W', avg: 450 } } } } } } };
    const e = run(doc).result.energy;
    assert.equal(e?.gpus, 1);
    assert.equal(e?.energy_j, 9000);
    assert.equal(e?.avg_power_w, 450);
    assert.equal(e?.energy_per_output_token_j, 0.5, 'the reciprocal the file states');
    const bare = parseFile('profile_export_genai_perf.json', fixtureBytes('profile_export_genai_perf.json')).runs[0] as ParsedRun;
    assert.equal(bare.result.energy, undefined);
  });

  it('totals without telemetry_data (GPU count unknown) are left out, with a note', () => {
    const doc = aiperf();
    delete doc['telemetry_data'];
    const r = run(doc);
    assert.equal(r.result.energy, undefined);
    assert.ok(r.meta.notes.some((n) => /power totals left out: telemetry_data names no GPU/.test(n)));
  });

  it('an lm-bench result keeps its energy block', () => {
    const lmb = parseFile('lm-bench-result.json', fixtureBytes('lm-bench-result.json')).runs[0] as ParsedRun;
    const energy = { source: 'nvidia-smi', gpus: 1, window: { start_s: 0.5, end_s: 10.5, rule: 'load' }, avg_power_w: 400, energy_j: 4000, energy_per_output_token_j: 0.5, output_tokens_per_joule: 2, unavailable_reason: null } as const;
    assert.deepEqual(run({ ...lmb.result, energy }).result.energy, energy);
  });
});
