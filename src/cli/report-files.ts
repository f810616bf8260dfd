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

/**
 * Renders a study's report and writes DIR/report.html plus DIR/<plot>.svg; returns what it wrote.
 * `flag` names the option that chose DIR (default `out`). A DIR that cannot be written is the user's
 * path, not a bug: it fails as LMB_ERR_INVALID_ARGUMENT (exit 2) naming the flag, and, as the study is
 * already stored (a tune or demo has just run it), with the command that renders it elsewhere.
 */
export async function writeStudyReport(
  store: Store,
  study: string,
  outDir: string,
  opts: { baseline?: string; interactive?: boolean; explanation?: StudyExplanation; flag?: string } = {},
): Promise<{ files: string[]; missing: Record<string, string>; report: Awaited<ReturnType<typeof renderStudyReport>> }> {
  const flag = opts.flag ?? 'out';
  const again = `; study "${study}" is stored: render its report elsewhere with \`lm-bench report --study ${study} --out DIR\` (with the same --db)`;
  try {
    assertOutputDir(outDir, flag);
  } catch (err) {
    if (err instanceof LmBenchError) throw new LmBenchError(err.code, `${err.message}${again}`, { details: err.details, cause: err });
    throw err;
  }
  const report = await renderStudyReport(store, study, {
    ...(opts.baseline === undefined ? {} : { baseline: opts.baseline }),
    ...(opts.explanation === undefined ? {} : { explanation: opts.explanation }),
    interactive: opts.interactive ?? true,
    generatedAt: new Date().toISOString(),
  });
  const files = [join(outDir, 'report.html')];
  try {
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'report.html'), report.html);
    for (const [kind, svg] of Object.entries(report.svgs)) {
      const f = join(outDir, `${kind}.svg`);
      writeFileSync(f, svg);
      files.push(f);
    }
  } catch (err) {
    // EACCES, EROFS, ENOSPC…: Node's message names the call and the path.
    const why = err instanceof Error ? err.message : String(err);
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} ${outDir}: cannot write the report (${why})${again}`, { details: { field: flag, value: outDir }, cause: err });
  }
  return { files, missing: { ...report.missing }, report };
}
