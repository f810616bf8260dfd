import { assertNever } from '../errors.js';
import { baseName } from './ids.js';
import { BR_VERSION, benchmarkReportYaml } from './llm-d-br.js';
import type { ExportedDocument, ExportFileText, ExportFormat, ExportItem } from './types.js';
import { ingestSidecarYaml, vllmBenchResult, vllmBenchResultJson } from './vllm-bench.js';

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
