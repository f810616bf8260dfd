import { relative, resolve } from 'node:path';
import { answerQuestion, priceAnswer } from '../../advise/answer.js';
import { formatAnswer } from '../../advise/text.js';
import { PROJECT_ROOT, defaultCatalog } from '../../catalog/index.js';
import { StudyObjective, Workload, parseSloString, type Slo } from '../../domain/index.js';
import { objectivesFor } from '../../optimize/objectives.js';
import { isLmBenchError, LmBenchError } from '../../errors.js';
import { simulatedAnswer } from '../../advise/simulated-answer.js';
import { priorSimulator } from '../../optimize/prior-simulator.js';
import { featureNames } from '../../model/features.js';
import { loadSurrogateFor } from '../../model/registry.js';
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

const USAGE = `Usage:
  lm-bench recommend --gpu GPU --gpus N --model MODEL --workload FILE [--slo ttft_p99_ms=350,itl_p99_ms=50]
                     [--objective goodput|tokens_per_joule|usd_per_mtok]
                     [--keep-precision] [--offline] [--db PATH] [--space FILE] [--candidates N] [--seed S] [--json]

MODEL is a catalog id, a directory holding the model's config.json (or the file), or a Hugging Face
repo id (ORG/NAME) read from the local cache or, unless --offline or HF_HUB_OFFLINE=1, the hub. GPU is
a catalog GPU (or the name nvidia-smi prints), a YAML file of the GPU's datasheet figures, or the id of
a datasheet a study in the history began with.

The best configuration the surrogate predicts for this deployment under the SLOs (default: the
workload file's slo), picked by a stated rule (the highest lower bound of throughput per GPU among
configurations likely to start and meet the SLOs), with ±2σ intervals, the Pareto set it came from,
the best configuration that keeps the checkpoint's numerics (no fp8 weights or KV cache) beside it,
the \`vllm serve\` command line and a \`vllm serve --config\` YAML. The surrogate is the newest one
covering this GPU and model: saved by a study (\`lm-bench tune\`) or by \`lm-bench surrogate train\`.
With none (an empty database, or no runs of this GPU and model), the simulator answers in seconds:
labelled as simulated, with intervals from its measured error, and the 2-3 runs that would most
change the answer.
Says when the history is too thin to trust and which runs to do next, as commands to paste.
--objective says what the pick is for, always under the SLOs: goodput (the default: the rule above);
tokens_per_joule, the lowest upper bound (mean + 2σ) of predicted joules per output token of all the
deployment's GPUs (the simulator's power model, corrected by the power measured runs carried);
usd_per_mtok, the fewest dollars per million output tokens, which on one GPU type (a fixed price per
GPU-hour) is the goodput rule, with the cost stated beside the pick. The answer states its rule.
--keep-precision pins quantization and kv_cache_dtype to the checkpoint's own.`;

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
  let slo: Slo;
  try {
    slo = values.slo === undefined ? (workload.slo ?? {}) : parseSloString(values.slo);
  } catch (err) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--slo: ${err instanceof Error ? err.message : String(err)}`, { cause: err, details: { field: 'slo' } });
  }
  const candidates = numberFlag(values.candidates, 'candidates', { int: true, min: 100, max: 1_000_000 }) ?? 20_000;
  const seed = numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 0;
  const objective = objectiveFlag(values.objective);
  const space = loadSpace(values.space === undefined ? resolve(PROJECT_ROOT, 'search-spaces/vllm.yaml') : resolve(io.cwd, values.space));
  const store = openStore(dbPath);
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
    const simulator = priorSimulator(store, catalog, { hardware: { gpu: hardware.id, count: gpuCount }, model: model.id, workload, slo });
    const answer =
      loaded === null
        ? priceAnswer(simulatedAnswer({ question, space, catalog, simulator }), question, catalog)
        : answerQuestion({ model: { info: loaded.record, surrogate: loaded.surrogate }, space, catalog, question, simulator });
    if (values.json === true) writeJson(io, answer);
    else io.stdout.write(`${formatAnswer(answer)}${energyLine(answer, objective)}\n`);
    return 0;
  } finally {
    store.close();
  }
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
