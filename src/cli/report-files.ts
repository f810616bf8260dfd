import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderStudyReport } from '../report/study/index.js';
import type { Store } from '../store/store.js';

/** Renders a study's report and writes DIR/report.html plus DIR/<plot>.svg; returns what it wrote. */
export async function writeStudyReport(
  store: Store,
  study: string,
  outDir: string,
  opts: { baseline?: string; interactive?: boolean } = {},
): Promise<{ files: string[]; missing: Record<string, string>; report: Awaited<ReturnType<typeof renderStudyReport>> }> {
  const report = await renderStudyReport(store, study, {
    ...(opts.baseline === undefined ? {} : { baseline: opts.baseline }),
    interactive: opts.interactive ?? true,
    generatedAt: new Date().toISOString(),
  });
  mkdirSync(outDir, { recursive: true });
  const files = [join(outDir, 'report.html')];
  writeFileSync(join(outDir, 'report.html'), report.html);
  for (const [kind, svg] of Object.entries(report.svgs)) {
    const f = join(outDir, `${kind}.svg`);
    writeFileSync(f, svg);
    files.push(f);
  }
  return { files, missing: { ...report.missing }, report };
}
