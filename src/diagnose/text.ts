import type { Bottleneck, Diagnosis, EvidenceItem, KnobAdvice, Saturation } from '../domain/index.js';

/** A diagnosis that names a bottleneck (not `none`, not missing). */
export function hasBottleneck(d: Diagnosis | null | undefined): d is Diagnosis {
  return d !== null && d !== undefined && d.bottleneck !== 'none';
}

/** `kv_cache` → `kv-cache-bound`. */
export function boundName(b: Bottleneck): string {
  return `${b.replace('_', '-')}-bound`;
}

/** A knob change in words: `raise max_num_seqs to 16`, `set kv_cache_dtype to fp8`, `lower max_num_seqs`. */
export function knobText(k: KnobAdvice): string {
  return `${k.change} ${k.knob}${k.to === null ? '' : ` to ${String(k.to)}`}`;
}

/** What to try, in one line: vLLM knob changes, or the server's own flags (empty when neither). */
export function adviceText(d: Diagnosis): string {
  return [...d.knobs.map(knobText), ...d.hints].join('; ');
}

/** The lines a terminal shows for a diagnosis (none for a run without a bottleneck). */
export function diagnosisLines(d: Diagnosis | null | undefined): string[] {
  if (d === null || d === undefined || (d.bottleneck === 'none' && d.failures === null)) return [];
  return [`why: ${d.summary}`, ...d.knobs.map((k) => `  try: ${knobText(k)} (${k.why})`), ...d.hints.map((h) => `  try: ${h}`)];
}

export function formatValue(e: EvidenceItem): string {
  const v = e.unit === 'share' ? `${(e.value * 100).toFixed(0)}%` : Number.isInteger(e.value) ? String(e.value) : e.value.toFixed(e.value < 10 ? 2 : 1);
  const unit = e.unit === 'share' || e.unit === 'count' ? '' : ` ${e.unit}`;
  const limit = e.limit === null ? '' : e.unit === 'share' ? ` (limit ${(e.limit * 100).toFixed(0)}%)` : ` (limit ${e.limit})`;
  return `${v}${unit}${limit}`;
}

/** One piece of evidence as `name value (limit)`. */
export function evidencePhrase(e: EvidenceItem): string {
  return `${e.name} ${formatValue(e)}`;
}

/** The evidence as `name value (limit)` phrases. */
export function evidenceText(d: Diagnosis): string[] {
  return d.evidence.map(evidencePhrase);
}

/** A short label: `admission-bound`, `no bottleneck`. */
export function bottleneckLabel(d: Diagnosis | null | undefined): string {
  if (d === null || d === undefined) return '–';
  if (d.bottleneck === 'none') return 'none';
  return `${boundName(d.bottleneck)}${d.also === null ? '' : ` (+${boundName(d.also)})`}`;
}

const rps = (x: number): string => (x >= 10 ? x.toFixed(1) : x.toFixed(2));

/**
 * "cannot sustain this load: sustains 3.18 req/s of 4.13 offered, its queue growing by 0.95 req/s", or
 * null when the run kept up (or it cannot be told: a closed loop, a burst, a measured run).
 */
export function saturationText(s: Saturation | null | undefined): string | null {
  if (s === null || s === undefined || !s.saturated) return null;
  return `cannot sustain this load: sustains ${rps(s.sustained_rps)} req/s of ${rps(s.offered_rps)} offered, its queue growing by ${rps(s.backlog_growth_rps)} req/s`;
}

/** The same, with why its latency figures say nothing (a terminal line under a saturated run's figures). */
export function saturationLine(s: Saturation | null | undefined): string | null {
  const t = saturationText(s);
  return t === null ? null : `SATURATED: ${t}; its queue grows for as long as requests arrive, so its latency figures measure the run's length, not the server`;
}

/**
 * A terminal line under a run too short to tell whether it kept up (`undecided`), or null: its pace was
 * under its arrivals and the requests in it were still growing, but its batch had not turned over.
 */
export function undecidedLine(s: Saturation | null | undefined): string | null {
  if (s === null || s === undefined || s.saturated || s.undecided !== true) return null;
  return `UNDECIDED: too short to tell whether the server keeps up: it worked through ${rps(s.sustained_rps)} req/s of ${rps(s.offered_rps)} offered and the requests in it were still growing when the arrivals stopped, before its batch had turned over; a longer run (more prompts) decides it`;
}

/** The saturation line or the undecided one, whichever applies (null for a run that kept up). */
export function keepUpLine(s: Saturation | null | undefined): string | null {
  return saturationLine(s) ?? undecidedLine(s);
}
