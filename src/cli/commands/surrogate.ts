import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROJECT_ROOT, defaultCatalog } from '../../catalog/index.js';
import { LmBenchError } from '../../errors.js';
import { datasetFromStore, type Dataset } from '../../surrogate/dataset.js';
import { DEFAULT_SURROGATE_SPEC, measuredRow, type SurrogateSpec } from '../../surrogate/surrogate.js';
import { foldFitOf, trainFromStore } from '../../surrogate/train.js';
import { crossValidate, type FitFn, type ValidationReport } from '../../surrogate/validate.js';
import { spaceEncoder } from '../../optimize/space-source.js';
import { loadSpace } from '../../space/index.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { createRng } from '../../util/rng.js';
import { createFitPool, poolFit, type FitPool } from '../../surrogate/fit-pool.js';
import { numberFlag, parseFlags } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { usage as USAGE } from '../usage/surrogate.js';

/**
 * `lm-bench surrogate train|eval`: the surrogate (the XGBoost model of a configuration's metrics) fitted
 * and validated on the history in the store. Named so that "model" means the LLM everywhere; `model.ts`
 * is the deprecated alias under the old name.
 */



const OPTIONS = {
  db: { type: 'string' },
  folds: { type: 'string' },
  members: { type: 'string' },
  rounds: { type: 'string' },
  seed: { type: 'string' },
  space: { type: 'string' },
  threads: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

const pct = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '–' : `${(x * 100).toFixed(1)}%`);
const fix = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(3));

function validationText(v: ValidationReport): string {
  const lines = [`${v.folds}-fold validation over ${v.rows} rows`, '  target                      MAPE     R²'];
  for (const [t, s] of Object.entries(v.targets)) lines.push(`  ${t.padEnd(26)} ${pct(s.mape).padStart(7)}  ${fix(s.r2)}`);
  if (v.feasibility_accuracy !== null) lines.push(`  feasibility accuracy       ${pct(v.feasibility_accuracy)}`);
  if (v.sustain_accuracy !== null) lines.push(`  sustain accuracy           ${pct(v.sustain_accuracy)}`);
  const imp = Object.entries(v.importance).sort((a, b) => b[1] - a[1]);
  if (imp.length > 0) lines.push('knob importance (rise in held-out MAPE when shuffled):', ...imp.map(([k, x]) => `  ${k.padEnd(26)} ${(x * 100).toFixed(1)} pp`));
  return lines.join('\n');
}

/** The stored runs the training set left out, said beside its row count (null when none). */
function skippedText(s: Dataset['skipped']): string | null {
  const parts = [
    ...(s.no_workload > 0 ? [`${s.no_workload} stored runs without a workload`] : []),
    ...(s.unknown_context > 0 ? [`${s.unknown_context} naming a GPU or model the catalog lacks`] : []),
  ];
  return parts.length === 0 ? null : `left out of training: ${parts.join(' and ')}`;
}

/** Runs the command; `invokedAs` is the name the user typed (`model` for the deprecated alias), so errors echo it. */
export async function runSurrogate(argv: readonly string[], io: CliIo, invokedAs = 'surrogate'): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (sub === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `${invokedAs}: expected \`train\` or \`eval\`, got nothing\n${USAGE}`, { details: { field: 'subcommand' } });
  if (sub !== 'train' && sub !== 'eval') throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `unknown subcommand "${invokedAs} ${sub}"\n${USAGE}`);
  const { values } = parseFlags(rest, OPTIONS);
  if (values.help === true) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const folds = numberFlag(values.folds, 'folds', { int: true, min: 0, max: 20 }) ?? (sub === 'train' ? 3 : 5);
  if (sub === 'eval' && folds < 2) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--folds must be ≥ 2 for eval');
  // One fold has nothing to hold out: train would skip validation as if --folds 0 had been asked for.
  if (folds === 1) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--folds must be 0 (no validation) or ≥ 2', { details: { field: 'folds' } });
  const spec: SurrogateSpec = {
    ...DEFAULT_SURROGATE_SPEC,
    members: numberFlag(values.members, 'members', { int: true, min: 1, max: 32 }) ?? DEFAULT_SURROGATE_SPEC.members,
    xgb: { ...DEFAULT_SURROGATE_SPEC.xgb, rounds: numberFlag(values.rounds, 'rounds', { int: true, min: 1, max: 5000 }) ?? DEFAULT_SURROGATE_SPEC.xgb.rounds ?? 120 },
  };
  const seed = numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 0;
  const threads = numberFlag(values.threads, 'threads', { int: true, min: 0, max: 16 });
  const spacePath = values.space === undefined ? resolve(PROJECT_ROOT, 'search-spaces/vllm.yaml') : resolve(io.cwd, values.space);
  const space = loadSpace(spacePath);
  const catalog = defaultCatalog();
  const dbPath = values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db);
  // Both subcommands learn from a history: a path with none (a typo, a fresh checkout) is said so,
  // rather than answered "0 measured runs" from an empty store created there on the way.
  if (!existsSync(dbPath)) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `no history database at ${dbPath}; ingest results (\`lm-bench ingest\`) or run a study (\`lm-bench tune\`) first, or name it with --db`, { details: { field: 'db', file: dbPath } });
  }
  const store = openStore(dbPath);
  let pool: FitPool | undefined;
  try {
    pool = threads === 0 ? undefined : createFitPool(threads === undefined ? {} : { threads });
    const fit: FitFn | undefined = pool === undefined ? undefined : poolFit(pool);
    const progress = (msg: string): void => {
      if (io.stderr.isTTY === true && values.json !== true) io.stderr.write(`${msg}\n`);
    };
    if (sub === 'train') {
      progress(`training on the runs in the store (${folds > 0 ? `${folds}-fold validation, ` : ''}${spec.members} members per target)…`);
      const out = await trainFromStore(store, catalog, spaceEncoder(space), { spec, seed, folds, spaceName: space.name, ...(fit === undefined ? {} : { fit }) });
      if (values.json === true) {
        writeJson(io, { surrogate_id: out.model.id, kind: out.model.kind, size_bytes: out.model.size_bytes, rows: out.dataset.rows.length, targets: Object.keys(out.surrogate.targets), metrics: out.model.metrics, validation: out.validation, skipped: out.dataset.skipped });
      } else {
        io.stdout.write(`saved surrogate #${out.model.id} (${(out.model.size_bytes / 1024).toFixed(0)} KiB) trained on ${out.dataset.rows.length} rows; targets: ${Object.keys(out.surrogate.targets).join(', ')}\n`);
        const skipped = skippedText(out.dataset.skipped);
        if (skipped !== null) io.stdout.write(`${skipped}\n`);
        if (out.validation !== null) io.stdout.write(`${validationText(out.validation)}\n`);
        else if (folds >= 2) {
          // trainFromStore skips validation below 3 measured runs a fold: say so, rather than print a
          // model with no error figures as if none had been asked for.
          const measured = out.dataset.rows.filter(measuredRow).length;
          io.stdout.write(`not validated: ${measured} measured runs; ${folds}-fold validation needs at least ${folds * 3} (--folds 0 skips it)\n`);
        }
      }
      return 0;
    }
    const dataset = datasetFromStore(store, catalog, spaceEncoder(space));
    // Runs with figures: a run that broke under its load started but teaches no target.
    const measured = dataset.rows.filter(measuredRow).length;
    if (measured < Math.max(spec.minRows, folds * 4)) {
      throw new LmBenchError('LMB_ERR_HISTORY_TOO_THIN', `${measured} measured runs in the store; ${folds}-fold validation needs at least ${Math.max(spec.minRows, folds * 4)}`);
    }
    progress(`${folds}-fold validation over ${dataset.rows.length} rows…`);
    const report = await crossValidate(dataset.rows, dataset.featureNames, spec, { folds, rng: createRng(seed), fit: foldFitOf(fit) });
    if (values.json === true) writeJson(io, report);
    else io.stdout.write(`${validationText(report)}\n`);
    return 0;
  } finally {
    await pool?.close();
    store.close();
  }
}

export const command: Command = {
  name: 'surrogate',
  summary: 'train and validate the surrogate model on the history in the store',
  usage: USAGE,
  run: (argv, io) => runSurrogate(argv, io),
};
