import { resolve } from 'node:path';
import { defaultDbPath, openStore } from '../../store/index.js';
import { parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { assertOutputDir, writeStudyReport } from '../report-files.js';

const usage = `Usage:
  lm-bench report --study NAME --out DIR [--db PATH] [--baseline STUDY] [--static] [--json]

Writes DIR/report.html and one SVG per plot (DIR/<plot>.svg) for a tuning study. The page is one
self-contained file (vega, vega-lite and vega-embed inlined, no network): it opens with the answer —
the recommended vLLM flags as a command line and as a \`vllm serve --config\` YAML, measured and
predicted metrics, how confident, and the comparison with vLLM's defaults — then shows why: the Pareto
fronts, the optimization history (against a random-search study of the same deployment, --baseline or
found in the store), knob importance and partial dependence, predicted vs measured, latency
distributions, what the rules pruned, failed configurations and every trial.
--static leaves the libraries out (smaller page, the pre-rendered SVGs without tooltips).
`;

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
  const store = openStore(v.db ?? defaultDbPath(io));
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
