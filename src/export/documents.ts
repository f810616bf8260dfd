import { assertNever } from '../errors.js';
import { baseName } from './ids.js';
import { BR_VERSION, benchmarkReportYaml } from './llm-d-br.js';
import type { ExportedDocument, ExportFileText, ExportFormat, ExportItem, Skipped } from './types.js';
import { ingestSidecarYaml, vllmBenchResult, vllmBenchResultJson, vllmMissing } from './vllm-bench.js';

/**
 * Items → the files to write, named predictably. Pure. llm-d-br reports are named as llm-d's harness
 * names them (`benchmark_report_v0.2,_<result>.yaml`), since llm-d's analysis globs that pattern; a
 * `vllm` export adds `summary.json`, the list of every record, which is what `vllm bench sweep plot`
 * reads (it globs `**\/summary.json`), and which lm-bench's ingest passes over in a folder walk.
 */
export const VLLM_SUMMARY = 'summary.json';

export interface ExportDocuments {
  readonly documents: readonly ExportedDocument[];
  readonly summary: ExportFileText | null;
}

/**
 * The items a format can hold, and the rest with the reason. An llm-d report leaves out any statistic
 * it lacks, so it holds every item; a `vllm` result cannot be written without the figures every such
 * result carries (vllm-bench.ts `VLLM_ALWAYS`).
 */
export function exportable(items: readonly ExportItem[], format: ExportFormat): { items: ExportItem[]; skipped: Skipped[] } {
  if (format === 'llm-d-br') return { items: [...items], skipped: [] };
  const kept: ExportItem[] = [];
  const skipped: Skipped[] = [];
  for (const item of items) {
    const missing = vllmMissing(item);
    if (missing.length === 0) {
      kept.push(item);
      continue;
    }
    const reason = `its source did not record ${missing.join(', ')}, which every vllm bench serve result carries; --format llm-d-br leaves missing figures out`;
    const s = item.subject;
    skipped.push(s.kind === 'run' ? { run_id: s.run_id, source_format: s.source_format, reason } : { trial: s.trial, state: 'complete', reason });
  }
  return { items: kept, skipped };
}

export function exportDocuments(items: readonly ExportItem[], format: ExportFormat): ExportDocuments {
  switch (format) {
    case 'llm-d-br':
      return {
        documents: items.map((item) => ({
          subject: item.subject,
          file: { name: `benchmark_report_v${BR_VERSION},_${baseName(item.subject)}.yaml`, text: benchmarkReportYaml(item) },
          sidecar: null,
        })),
        summary: null,
      };
    case 'vllm':
      return {
        documents: items.map((item) => {
          const name = `${baseName(item.subject)}.json`;
          return { subject: item.subject, file: { name, text: vllmBenchResultJson(item) }, sidecar: { name: `${name}.config.yaml`, text: ingestSidecarYaml(item) } };
        }),
        summary: { name: VLLM_SUMMARY, text: `${JSON.stringify(items.map(vllmBenchResult), null, 2)}\n` },
      };
    default:
      return assertNever(format, 'export format');
  }
}
