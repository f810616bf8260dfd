import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureText, refuses } from './helpers.js';

/**
 * A figure written as text ("12 ms", "12") or as YAML's .nan is refused naming the field, what was
 * expected and what the file holds; the union schema of a figure (a number, or Infinity/NaN as Python
 * writes them) said only "Invalid input".
 */
const text = fixtureText;

describe('ingest: a figure of the wrong kind is named with what the file holds', () => {
  it('JSON: units in a string, a number in quotes, null, a boolean', () => {
    const r = JSON.parse(text('vllm-serve-2025.json')) as Record<string, unknown>;
    refuses('units.json', JSON.stringify({ ...r, mean_ttft_ms: '61.2 ms' }), /^document: mean_ttft_ms: expected a number, found the string "61\.2 ms"$/);
    refuses('quoted.json', JSON.stringify({ ...r, duration: '25.5' }), /^document: duration: expected a number, found the string "25\.5"$/);
    refuses('null.json', JSON.stringify({ ...r, output_throughput: null }), /^document: output_throughput: expected a number, found null$/);
    refuses('bool.json', JSON.stringify({ ...r, p99_ttft_ms: true }), /^document: p99_ttft_ms: expected a number, found boolean true$/);
  });

  it("YAML: a figure in quotes or with its unit, and .nan or .inf (YAML's own non-finite numbers)", () => {
    const y = text('llm-d-br/br_v0_2_example.yaml');
    const ttft = /(time_to_first_token:\n\s+units: s\n\s+mean: )(0\.0368578234128654)/;
    assert.match(y, ttft);
    const field = /^document: results\.request_performance\.aggregate\.latency\.time_to_first_token\.mean: /.source;
    refuses('q.yaml', y.replace(ttft, '$1"$2"'), new RegExp(`${field}expected a number, found the string "0\\.0368578234128654"$`));
    refuses('u.yaml', y.replace(ttft, '$136.9 ms'), new RegExp(`${field}expected a number, found the string "36\\.9 ms"$`));
    refuses('n.yaml', y.replace(ttft, '$1.nan'), new RegExp(`${field}NaN is not a measurement`));
    refuses('i.yaml', y.replace(ttft, '$1.inf'), new RegExp(`${field}Infinity is not a measurement`));
  });
});
