import { resolve } from 'node:path';
import { calibrate, CALIBRATE_PARAMS, historyPoints } from '../../calibration/history.js';
import { saveProfile } from '../../calibration/profiles.js';
import { defaultCatalog } from '../../catalog/index.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { createSimPool } from '../../calibration/sim-pool.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo } from '../io.js';
import { vllmVersionFlag } from '../sim-profile-flag.js';

/**
 * `lm-bench sim calibrate --gpu G --model M`: the simulator's efficiencies fitted to the runs the
 * history holds for that GPU and model (src/calibration/history.ts), stored for the GPU: `sim run`,
 * `sim serve`, `sim predict` and `tune --target sim` price that GPU with them from then on
 * (`--profile default` to compare). Refuses when fewer than 6 runs are usable.
 */
export async function calibrateCmd(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, { gpu: { type: 'string' }, model: { type: 'string' }, db: { type: 'string' }, threads: { type: 'string' }, json: { type: 'boolean' }, offline: { type: 'boolean' }, 'vllm-version': { type: 'string' } });
  // The release the runs were measured on: the fit starts from the catalog's profile for it, and keeps
  // its parameters the fit does not move (an fp8 cache's rate).
  const vllmVersion = vllmVersionFlag(values['vllm-version']);
  const catalog = defaultCatalog();
  const hw = resolveGpuFlag(requireFlag(values.gpu, 'gpu'), io);
  const resolved = values.model === undefined ? undefined : await resolveModelFlag(values.model, io, values.offline);
  const threads = numberFlag(values.threads, 'threads', { int: true, min: 1, max: 64 });
  const store = openStore(values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db));
  try {
    // The runs of this checkpoint are stored under the id the history gave it.
    const model = resolved === undefined ? undefined : identifyResolvedModel(store, resolved, catalog).spec.id;
    const { points, skipped, simulated } = historyPoints(store, catalog, { gpu: hw.id, model });
    const start = catalog.profileFor(hw, vllmVersion);
    const pool = createSimPool(threads);
    const tty = io.stderr.isTTY === true && values.json !== true;
    let report;
    try {
      report = await calibrate({
        points,
        start,
        evaluate: async (ps, profiles) => (await pool.summaries(ps.map((p) => p.input), profiles)).map((row) => row.map((s) => (s === null || s.completed === 0 ? null : { ttftMs: s.ttftMs.mean, tpotMs: s.tpotMs.mean }))),
        onProgress: (p) => {
          if (tty) io.stderr.write(`\rcalibrating ${hw.id}: ${p.phase}, ${p.evaluations} evaluations, loss ${p.loss.toFixed(3)}   `);
        },
      });
    } finally {
      await pool.close();
    }
    if (tty) io.stderr.write('\n');
    const stored = saveProfile(store, {
      gpu: hw.id,
      model: model ?? null,
      runs: report.runs,
      profile: report.profile,
      metrics: {
        'fit.ttft_mape': report.fit.ttft_mape,
        'fit.tpot_mape': report.fit.tpot_mape,
        'loo.ttft_mape': report.leave_one_out.ttft_mape,
        'loo.tpot_mape': report.leave_one_out.tpot_mape,
        'before.ttft_mape': report.before.ttft_mape,
        'before.tpot_mape': report.before.tpot_mape,
      },
    });
    if (values.json === true) {
      writeJson(io, { gpu: hw.id, model: model ?? null, profile_id: stored.modelId, runs: report.runs, skipped, simulated, profile: report.profile, fit: report.fit, leave_one_out: report.leave_one_out, before: report.before, evaluations: report.evaluations });
    } else {
      const p = (x: number | null): string => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
      io.stdout.write(
        [
          `Calibrated the simulator for ${hw.id}${model === undefined ? '' : ` on ${model}`} from ${report.runs} runs (${skipped} skipped: no workload or no mean TTFT/TPOT${simulated === 0 ? '' : `; ${simulated} simulated runs left out`}).`,
          `  mean TTFT MAPE: ${p(report.before.ttft_mape)} with the default profile → ${p(report.fit.ttft_mape)} fitted, ${p(report.leave_one_out.ttft_mape)} leave-one-out`,
          `  mean TPOT MAPE: ${p(report.before.tpot_mape)} with the default profile → ${p(report.fit.tpot_mape)} fitted, ${p(report.leave_one_out.tpot_mape)} leave-one-out`,
          '  parameters (default → fitted):',
          ...CALIBRATE_PARAMS.map((k) => `    ${k.padEnd(22)} ${String(Number(start[k].toPrecision(4))).padStart(8)} → ${Number(report.profile[k].toPrecision(4))}`),
          `Stored as model ${stored.modelId}; the simulator uses it for ${hw.id} from now on (--profile default for the default).`,
        ].join('\n') + '\n',
      );
    }
    return 0;
  } finally {
    store.close();
  }
}
