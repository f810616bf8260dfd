import { LmBenchError } from '../errors.js';
import { MLENERGY_SETUP_COLUMNS } from './mlenergy-rows.js';
import { SILICON_REQUIRED_COLUMNS } from './silicon.js';

/**
 * Which measured-row layout a CSV is in, from its header alone: aiconfigurator's `silicon_sample.csv`
 * (silicon.ts) or ML.ENERGY Benchmark v3's (mlenergy-rows.ts). A layout is recognised by its setup
 * columns; the measured ones may be absent in both, so they decide nothing.
 */
export type RowLayout = 'aiconfigurator-silicon' | 'mlenergy-v3';

const LAYOUTS: readonly { readonly layout: RowLayout; readonly name: string; readonly columns: readonly string[] }[] = [
  { layout: 'aiconfigurator-silicon', name: "aiconfigurator's silicon layout", columns: SILICON_REQUIRED_COLUMNS },
  { layout: 'mlenergy-v3', name: "ML.ENERGY v3's layout", columns: MLENERGY_SETUP_COLUMNS },
];

/** The layout whose columns the header holds; a header that holds neither's is the file's error, naming what each lacks. */
export function detectRowLayout(columns: readonly string[], file: string, headerLine: number): RowLayout {
  const missing = LAYOUTS.map((l) => ({ ...l, missing: l.columns.filter((c) => !columns.includes(c)) }));
  const hit = missing.find((l) => l.missing.length === 0);
  if (hit !== undefined) return hit.layout;
  // The nearer layout is the one the user most likely meant: its missing columns lead the message.
  const [near, far] = [...missing].sort((a, b) => a.missing.length / a.columns.length - b.missing.length / b.columns.length) as [(typeof missing)[number], (typeof missing)[number]];
  throw new LmBenchError(
    'LMB_ERR_CONFIG_INVALID',
    `${file}:${headerLine}: the header is in no layout sim predict reads: ${near.name} lacks ${near.missing.join(', ')}; ${far.name} lacks ${far.missing.join(', ')}`,
    { details: { file, line: headerLine, field: near.missing[0] } },
  );
}

/** The 1-based line of a CSV's header: the first line with anything on it (the reader skips blank ones). */
export function headerLineOf(text: string): number {
  return text.split('\n').findIndex((l) => l.trim() !== '') + 1;
}
