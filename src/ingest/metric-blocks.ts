import { z } from 'zod';
import { RawNum, put, putStats, type Draft } from './draft.js';
import { csvNumber, csvSections, misfit, type CsvRow } from './csv-text.js';
import { rejected } from './json-text.js';
import { formatZodIssues } from '../util/zod-issues.js';

/**
 * The per-metric statistic blocks genai-perf and its successor AIPerf export: `{unit, avg, p1…p99,
 * min, max, std, count, sum}` keyed by metric tag (`time_to_first_token`, `request_count`, …), in the
 * JSON file, and the same figures as display-name rows in the CSV (`Time to First Token (ms),avg,…`
 * then a `Metric,Value` table for the single-figure metrics). Both forms become one `Blocks` map, so
 * one parser per tool reads either file. Fields the tool omits or writes as null stay absent.
 */
const optStat = RawNum.nullable().optional();
export const Block = z.looseObject({
  unit: z.string().nullable().optional(),
  avg: optStat,
  p1: optStat,
  p5: optStat,
  p10: optStat,
  p25: optStat,
  p50: optStat,
  p75: optStat,
  p90: optStat,
  p95: optStat,
  p99: optStat,
  min: optStat,
  max: optStat,
  std: optStat,
  count: z.number().nullable().optional(),
});
export type Block = z.infer<typeof Block>;
export type Blocks = Record<string, Block>;

const MS_PER_UNIT: Record<string, number> = { ms: 1, s: 1000, sec: 1000, us: 1e-3, ns: 1e-6 };

/** A block's time statistics in ms (unit checked), as putStats wants them; std converted by `stdScale`. */
export function msStats(b: Block, key: string, label: string, stdScale = 1) {
  const unit = (b.unit ?? 'ms').trim().toLowerCase();
  const f = MS_PER_UNIT[unit];
  if (f === undefined) throw rejected(`${label}: ${key}.unit "${b.unit ?? ''}" is not a time unit`);
  const sc = (x: number | null | undefined) => (typeof x === 'number' ? x * f : undefined);
  return { mean: sc(b.avg), median: sc(b.p50), std: typeof b.std === 'number' ? b.std * f * stdScale : undefined, p50: sc(b.p50), p90: sc(b.p90), p95: sc(b.p95), p99: sc(b.p99) };
}

/** Puts a latency block under a vLLM metric (ttft, tpot, itl, e2el) when the block has a mean. */
export function putLatency(d: Draft, blocks: Blocks, tag: string, metric: 'ttft' | 'tpot' | 'itl' | 'e2el', opts: { label: string; stdScale?: (b: Block) => number }): boolean {
  const b = blocks[tag];
  if (b === undefined || typeof b.avg !== 'number') return false;
  putStats(d, metric, msStats(b, tag, opts.label, opts.stdScale ? opts.stdScale(b) : 1));
  return true;
}

/** The `avg` of a single-figure block (counts, totals, rates), or undefined. */
export function avgOf(blocks: Blocks, tag: string): number | undefined {
  const v = blocks[tag]?.avg;
  return typeof v === 'number' ? v : undefined;
}

/** A count the file states (request_count, error_request_count): a non-negative integer, else rejected. */
export function countOf(blocks: Blocks, tag: string, label: string): number | undefined {
  const v = avgOf(blocks, tag);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0) throw rejected(`${label}: ${tag}.avg ${v} is not a request count`);
  return v;
}

/** Puts a figure that must be finite; used for counts and totals read from blocks. */
export function putAvg(d: Draft, key: Parameters<typeof put>[1], blocks: Blocks, tag: string): number | undefined {
  const v = avgOf(blocks, tag);
  put(d, key, v);
  return v;
}

/** Validates every object-valued entry that looks like a stat block; other keys are left alone. */
export function collectBlocks(obj: Record<string, unknown>, label: string): Blocks {
  const out: Blocks = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !('avg' in v)) continue;
    const r = Block.safeParse(v);
    if (!r.success) {
      throw rejected(formatZodIssues(r.error.issues, label, (path) => [k, ...path.map(String)].join('.')));
    }
    out[k] = r.data;
  }
  return out;
}

/** "Time to First Token (ms)" → { name: "time to first token", unit: "ms" }. */
function splitName(cell: string): { name: string; unit: string | undefined } {
  const m = /^(.*?)\s*\(([^()]*)\)\s*$/.exec(cell.trim());
  return m ? { name: (m[1] ?? '').toLowerCase(), unit: m[2] } : { name: cell.trim().toLowerCase(), unit: undefined };
}

/**
 * The statistic and single-figure tables of an AIPerf or genai-perf CSV → Blocks, display names mapped
 * through `names` (lower-case display name → tag). Rows of other tables (GPU telemetry, per-GPU
 * figures) and unknown metrics are skipped. A table whose header is not `Metric,…` is ignored.
 */
export function csvBlocks(rows: readonly CsvRow[], names: Readonly<Record<string, string>>, file: string): { blocks: Blocks; skipped: string[] } {
  const blocks: Blocks = {};
  /** The line each tag was read from, and what it held: a metric written twice must say the same. */
  const seen = new Map<string, { line: number; block: string }>();
  const skipped: string[] = [];
  for (const section of csvSections(rows)) {
    const header = section[0];
    if (header === undefined || header.cells[0]?.trim() !== 'Metric') continue;
    const cols = header.cells.map((c) => c.trim().toLowerCase());
    // Per-GPU tables ("Metric,GPU,…", "Endpoint,GPU_Index,…") are telemetry, not request metrics.
    if (cols.includes('gpu')) continue;
    // Two "avg" columns: the second would replace the first unseen.
    const twice = cols.find((c, i) => c !== '' && cols.indexOf(c) !== i);
    if (twice !== undefined) throw rejected(`${file} line ${header.line}: column "${twice}" appears twice in the header, so which one holds the figure is unknown`);
    const single = cols.length === 2 && cols[1] === 'value';
    for (const row of section.slice(1)) {
      // A row that does not line up with its header is never half-read, nor read one column over.
      const bad = misfit(row, cols.length);
      if (bad !== null) throw rejected(`${file} line ${row.line}: ${bad}`);
      const { name, unit } = splitName(row.cells[0] ?? '');
      const tag = names[name];
      if (tag === undefined) {
        skipped.push(row.cells[0] ?? '');
        continue;
      }
      const where = `${file} line ${row.line}`;
      const block: Record<string, unknown> = { unit: unit ?? null };
      if (single) block['avg'] = csvNumber(row.cells[1], `${where}, ${row.cells[0] ?? ''}`);
      else {
        for (const [i, col] of cols.entries()) {
          if (i === 0) continue;
          const v = csvNumber(row.cells[i], `${where}, ${row.cells[0] ?? ''} ${col}`);
          if (v !== undefined) block[col === 'std dev' ? 'std' : col] = v;
        }
      }
      const parsed = Block.safeParse(block);
      if (!parsed.success) continue;
      const text = JSON.stringify(parsed.data);
      const first = seen.get(tag);
      if (first !== undefined && first.block !== text) {
        throw rejected(`${where}: ${row.cells[0] ?? ''} is written twice with different figures (first on line ${first.line}), so which is the measurement is unknown`);
      }
      seen.set(tag, first ?? { line: row.line, block: text });
      blocks[tag] = parsed.data;
    }
  }
  return { blocks, skipped };
}
