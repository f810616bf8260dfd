import type { Diagnosis, KnobAdvice } from '../domain/index.js';
import { formatValue } from './classify.js';

/** A knob change in words: `raise max_num_seqs to 16`, `set kv_cache_dtype to fp8`, `lower max_num_seqs`. */
export function knobText(k: KnobAdvice): string {
  return `${k.change} ${k.knob}${k.to === null ? '' : ` to ${String(k.to)}`}`;
}

/** The lines a terminal shows for a diagnosis (none for a run without a bottleneck). */
export function diagnosisLines(d: Diagnosis | null | undefined): string[] {
  if (d === null || d === undefined || d.bottleneck === 'none') return [];
  return [`why: ${d.summary}`, ...d.knobs.map((k) => `  try: ${knobText(k)} (${k.why})`)];
}

/** The evidence as `name value (limit)` phrases. */
export function evidenceText(d: Diagnosis): string[] {
  return d.evidence.map((e) => `${e.name} ${formatValue(e)}`);
}

/** A short label: `admission-bound`, `no bottleneck`. */
export function bottleneckLabel(d: Diagnosis | null | undefined): string {
  if (d === null || d === undefined) return '–';
  return d.bottleneck === 'none' ? 'none' : `${d.bottleneck.replace('_', '-')}-bound${d.also === null ? '' : ` (+${d.also.replace('_', '-')})`}`;
}
