import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LmBenchError } from '../errors.js';
import { renderStudyReport } from '../report/study/index.js';
import type { Store } from '../store/store.js';
import type { StudyExplanation } from '../tune/explain-study.js';

/**
 * Checks, before any rendering, that `outDir` can be a directory of reports: it is one already, or it
 * does not exist and no file stands on its path. `flag` names the option in the message.
 */
export function assertOutputDir(outDir: string, flag: string): void {
  for (let p = outDir; ; p = dirname(p)) {
    if (existsSync(p)) {
      if (!statSync(p).isDirectory()) {
        throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} ${outDir}: ${p === outDir ? 'is a file, not a directory' : `${p} is a file, so no directory can be made under it`}`, { details: { field: flag, value: outDir } });
      }
      return;
    }
    if (dirname(p) === p) return;
  }
}

/** Renders a study's report and writes DIR/report.html plus DIR/<plot>.svg; returns what it wrote. */
export async function writeStudyReport(
  store: Store,
  study: string,
  outDir: string,
  opts: { baseline?: string; interactive?: boolean; explanation?: StudyExplanation } = {},
): Promise<{ files: string[]; missing: Record<string, string>; report: Awaited<ReturnType<typeof renderStudyReport>> }> {
  const report = await renderStudyReport(store, study, {
    ...(opts.baseline === undefined ? {} : { baseline: opts.baseline }),
    ...(opts.explanation === undefined ? {} : { explanation: opts.explanation }),
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
