import { join } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT, type Catalog } from '../catalog/index.js';
import { costOf, type Cost, type Hardware } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { loadYamlFile } from '../util/yaml.js';

/**
 * GPU prices (issue 25): data/prices.yaml, overridden GPU by GPU by `--prices FILE` (same layout), and
 * by a GPU datasheet's own `usd_per_gpu_hour`. Pure once loaded: a Prices value answers "what does an
 * hour of this GPU cost, and says who?" and nothing else reads the files.
 */
export const PriceEntry = z.strictObject({
  gpu: z.string().min(1),
  /** One GPU for one hour, on demand. Zero is allowed (hardware already paid for); negative is not. */
  usd_per_gpu_hour: z.number().nonnegative(),
  source: z.string().min(1),
  /** When the price was read (YYYY-MM-DD): prices move, so an answer says how old its figure is. */
  date: z.union([z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'a date as YYYY-MM-DD' }).refine(isCalendarDate, { error: 'a calendar date (month 01–12, a day that month has)' }), z.date().transform((d) => d.toISOString().slice(0, 10))]),
});

/** 2026-13-45 has the shape of a date but names none; an answer would quote it as the price's age. */
function isCalendarDate(text: string): boolean {
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text;
}
export type PriceEntry = z.infer<typeof PriceEntry>;

export const PricesFile = z.strictObject({
  currency: z.literal('USD'),
  prices: z.array(PriceEntry).min(1),
});
export type PricesFile = z.infer<typeof PricesFile>;

export const DEFAULT_PRICES_FILE = join(PROJECT_ROOT, 'data', 'prices.yaml');

export interface GpuPrice {
  readonly usdPerGpuHour: number;
  /** "data/prices.yaml: Modal list price … (2026-05-07)" */
  readonly source: string;
}

export interface Prices {
  /** The price of one hour of this GPU, or null when no file names it. */
  of(hw: Hardware): GpuPrice | null;
}

/** The entries of a prices file, each GPU checked against the catalog (an unknown GPU names its entry). */
function readEntries(file: string, catalog: Catalog): Map<string, GpuPrice> {
  const parsed = loadYamlFile(file, PricesFile, 'LMB_ERR_CONFIG_INVALID');
  const out = new Map<string, GpuPrice>();
  // The date is added where the source does not already name it ("…, verified 2026-05-07").
  parsed.prices.forEach((p, i) => {
    const id = catalog.findGpu(p.gpu)?.id;
    if (id === undefined) {
      throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: prices.${i}.gpu: "${p.gpu}" is not a GPU lm-bench knows (ids in data/hardware.yaml, or a datasheet YAML's id)`, { details: { file, field: `prices.${i}.gpu` } });
    }
    if (out.has(id)) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: prices.${i}.gpu: ${id} is priced twice`, { details: { file, field: `prices.${i}.gpu` } });
    out.set(id, { usdPerGpuHour: p.usd_per_gpu_hour, source: `${file === DEFAULT_PRICES_FILE ? 'data/prices.yaml' : file}: ${p.source}${p.source.includes(p.date) ? '' : ` (${p.date})`}` });
  });
  return out;
}

/** The default prices, with `overrideFile`'s entries in place of theirs for the GPUs it names. */
export function loadPrices(catalog: Catalog, overrideFile?: string): Prices {
  const table = readEntries(DEFAULT_PRICES_FILE, catalog);
  if (overrideFile !== undefined) for (const [id, p] of readEntries(overrideFile, catalog)) table.set(id, p);
  return {
    of: (hw) => {
      if (hw.usd_per_gpu_hour !== undefined) return { usdPerGpuHour: hw.usd_per_gpu_hour, source: `the datasheet of ${hw.id} (${hw.source})` };
      return table.get(hw.id) ?? null;
    },
  };
}

/** A deployment's cost at a throughput, or null when its GPU has no price. */
export function deploymentCost(prices: Prices, hw: Hardware, gpus: number, outputTokensPerS: number): Cost | null {
  const p = prices.of(hw);
  return p === null ? null : costOf(p.usdPerGpuHour, gpus, outputTokensPerS, p.source);
}
