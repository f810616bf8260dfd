import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { answerQuestion, priceAnswer, questionDeployment } from '../../advise/answer.js';
import { formatAnswer } from '../../advise/text.js';
import { withHistoryEvidence } from '../../advise/measured.js';
import { nameOrPathHint, unservableModelFile } from '../../advise/commands.js';
import { PROJECT_ROOT, defaultCatalog } from '../../catalog/index.js';
import { StudyObjective, Workload, parseSloString, type ModelSpec, type Slo } from '../../domain/index.js';
import { objectivesFor } from '../../optimize/objectives.js';
import { isLmBenchError, LmBenchError } from '../../errors.js';
import { simulatedAnswer } from '../../advise/simulated-answer.js';
import { priorSimulator } from '../../calibration/prior-simulator.js';
import { featureNames } from '../../surrogate/features.js';
import { loadSurrogateFor } from '../../surrogate/registry.js';
import { spaceEncoder } from '../../optimize/space-source.js';
import { loadSpace } from '../../space/index.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { assertGpuFitsHistory } from '../../store/adopt-gpu.js';
import { datasheetToCarry } from '../../catalog/gpu-file.js';
import { loadYamlFile } from '../../util/yaml.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { OFFLINE_FLAG, resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { usage as USAGE } from '../usage/recommend.js';
import { vllmVersionFlag } from '../sim-profile-flag.js';

const OPTIONS = {
  gpu: { type: 'string' },
  gpus: { type: 'string' },
  model: { type: 'string' },
  workload: { type: 'string' },
  slo: { type: 'string' },
  db: { type: 'string' },
  space: { type: 'string' },
  candidates: { type: 'string' },
  seed: { type: 'string' },
  objective: { type: 'string' },
  'keep-precision': { type: 'boolean' },
  'vllm-version': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  ...OFFLINE_FLAG,
} as const;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, OPTIONS);
  if (values.help === true) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const catalog = defaultCatalog();
  const dbPath = values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db);
  const hardware = resolveGpuFlag(requireFlag(values.gpu, 'gpu'), io, dbPath);
  const gpuCount = numberFlag(requireFlag(values.gpus, 'gpus'), 'gpus', { int: true, min: 1, max: 64 }) ?? 1;
  const resolved = await resolveModelFlag(requireFlag(values.model, 'model'), io, values.offline);
  const workloadArg = requireFlag(values.workload, 'workload');
  const workload = loadYamlFile(resolve(io.cwd, workloadArg), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  const slo: Slo = values.slo === undefined ? (workload.slo ?? {}) : parseSloString(values.slo);
  const candidates = numberFlag(values.candidates, 'candidates', { int: true, min: 100, max: 1_000_000 }) ?? 20_000;
  const seed = numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 0;
  const objective = objectiveFlag(values.objective);
  const vllmVersion = vllmVersionFlag(values['vllm-version']);
  const space = loadSpace(values.space === undefined ? resolve(PROJECT_ROOT, 'search-spaces/vllm.yaml') : resolve(io.cwd, values.space));
  // A question writes nothing: with no history at the path, none is created (an empty one in memory
  // answers from the simulator); an existing one is opened as it is (an older one migrated).
  const store = existsSync(dbPath) ? openStore(dbPath) : openStore(':memory:');
  try {
    // A datasheet must not borrow the history (runs, surrogates) of another GPU filed under its id.
    assertGpuFitsHistory(store, datasheetToCarry(hardware, catalog));
    // A question writes nothing: the model's id is the one its checkpoint has in this history.
    const model = identifyResolvedModel(store, resolved, catalog).spec;
    const encoder = spaceEncoder(space);
    const question = {
      gpu: hardware.id,
      gpus: gpuCount,
      model: model.id,
      workload,
      workloadRef: relative(io.cwd, resolve(io.cwd, workloadArg)) || workloadArg,
      slo,
      candidates,
      seed,
      keepPrecision: values['keep-precision'] === true,
      vllmVersion,
      // The preset's axes carry the objective to the rule (optimize/objectives.ts `studyObjectiveOf`).
      ...(objective === 'goodput' ? {} : { objectives: objectivesFor(objective) }),
    };
    let loaded: ReturnType<typeof loadSurrogateFor> | null = null;
    try {
      loaded = loadSurrogateFor(store, { gpu: hardware.id, model: model.id, schema: featureNames(encoder) });
    } catch (err) {
      // No model covers this deployment: the simulator answers, and says so.
      if (!isLmBenchError(err, 'LMB_ERR_MODEL_NOT_TRAINED')) throw err;
    }
    // The simulator answers when no model covers the deployment, and says what limits each configuration either way.
    const simulator = priorSimulator(store, catalog, questionDeployment(question));
    const predicted =
      loaded === null
        ? priceAnswer(simulatedAnswer({ question, space, catalog, simulator }), question, catalog)
        : answerQuestion({ model: { info: loaded.record, surrogate: loaded.surrogate }, space, catalog, question, simulator });
    // Where nothing is predicted to qualify, the runs of this deployment that met the SLOs are named, as measured.
    const answer = withNameOrPathHint(withHistoryEvidence(predicted, store, question, model), model);
    if (values.json === true) writeJson(io, answer);
    else io.stdout.write(`${formatAnswer(answer)}${energyLine(answer, objective)}\n`);
    return 0;
  } finally {
    store.close();
  }
}

/**
 * A model read from a JSON file other than config.json is served from a placeholder (advise/commands.ts
 * `servableModel`); the file's own `_name_or_path`, when it has one, is offered beside the warning that
 * says so. Read here, at the edge: the answer itself reads no file.
 */
function withNameOrPathHint<A extends { readonly warnings: string[] }>(a: A, model: ModelSpec): A {
  const file = unservableModelFile(model);
  if (file === null) return a;
  let name: unknown;
  try {
    name = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)['_name_or_path'];
  } catch {
    // The file the spec was read from is gone or changed since: nothing to offer.
    return a;
  }
  return typeof name === 'string' && name.trim() !== '' ? { ...a, warnings: [...a.warnings, nameOrPathHint(name)] } : a;
}

/** --objective: goodput (default), tokens_per_joule or usd_per_mtok; anything else is a usage error. */
function objectiveFlag(raw: string | undefined): StudyObjective {
  if (raw === undefined) return 'goodput';
  const res = StudyObjective.safeParse(raw === 'throughput' ? 'goodput' : raw);
  if (!res.success) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--objective must be goodput, tokens_per_joule or usd_per_mtok, got "${raw}"`, { details: { field: 'objective' } });
  return res.data;
}

/** The pick's predicted joules per output token, printed after the answer when the pick ranked by them. */
function energyLine(answer: { readonly best: { readonly predicted: Record<string, { mean: number; low: number; high: number } | undefined> } | null }, objective: StudyObjective): string {
  const e = answer.best?.predicted['energy_per_output_token_j'];
  if (objective !== 'tokens_per_joule' || e === undefined) return '';
  const f = (x: number): string => x.toPrecision(3);
  return `\n\nEnergy of the pick (predicted mean [±2σ]): ${f(e.mean)} [${f(e.low)}, ${f(e.high)}] J per output token, all the deployment's GPUs (${f(1 / e.mean)} tokens/J).`;
}

export const command: Command = {
  name: 'recommend',
  summary: 'the best predicted vLLM configuration under the SLOs, from the trained model or, with no history, the simulator',
  usage: USAGE,
  run,
};
