import { resolve } from 'node:path';
import { parseFlags, requireFlag } from '../args.js';
import { openExistingHistory } from '../history-db.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { assertOutputDir, writeStudyReport } from '../report-files.js';
import { usage } from '../usage/report.js';



const flags = {
  study: { type: 'string' },
  out: { type: 'string' },
  db: { type: 'string' },
  baseline: { type: 'string' },
  static: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values: v } = parseFlags(argv, flags);
  const name = requireFlag(v.study, 'study');
  const outDir = resolve(io.cwd, requireFlag(v.out, 'out'));
  assertOutputDir(outDir, 'out');
  const { store } = openExistingHistory(io, v.db);
  try {
    if (io.stderr.isTTY === true && v.json !== true) io.stderr.write('lm-bench report: rendering plots…\n');
    const { files, report } = await writeStudyReport(store, name, outDir, {
      ...(v.baseline === undefined ? {} : { baseline: v.baseline }),
      interactive: v.static !== true,
    });
    const rec = report.summary.recommendation;
    if (v.json === true) {
      writeJson(io, { study: report.summary.study.name, out: outDir, files, missing: report.missing, recommendation: rec });
    } else {
      io.stdout.write(`Wrote ${files.length} files to ${outDir}:\n${files.map((f) => `  ${f}`).join('\n')}\n`);
      for (const [kind, why] of Object.entries(report.missing)) io.stdout.write(`  (no ${kind} plot: ${why})\n`);
      io.stdout.write(rec === null ? 'No measured configuration met the SLOs.\n' : `Recommended (trial ${rec.trial}): ${rec.vllm_command}\n`);
    }
    return 0;
  } finally {
    store.close();
  }
}

export const command: Command = { name: 'report', summary: 'the HTML deployment report of a tuning study, with one SVG per plot', usage, run };
