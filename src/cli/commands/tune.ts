import { join, resolve } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../catalog/index.js';
import { parseKnobAssignments, parseSloString, StudySpec, Workload, type Slo, type StudyObjective } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { objectivesFor, studyObjectiveOf } from '../../optimize/objectives.js';
import { parseEndpoint } from '../../loadgen/index.js';
import { assertAllowedTarget } from '../../loadgen/endpoint.js';
import { loadSpace } from '../../space/index.js';
import { defaultDbPath, openStore } from '../../store/sqlite-store.js';
import { parseProfileChoice } from '../../calibration/profiles.js';
import type { Hardware } from '../../domain/index.js';
import type { Store } from '../../store/store.js';
import { bindSimProfile, simSpecRelease } from '../../targets/sim-target.js';
import { vllmVersionFlag } from '../sim-profile-flag.js';
import { TargetSpec } from '../../targets/spec.js';
import { SlurmConfig } from '../../targets/slurm/config.js';
import { registerStudySpecs, runStudy } from '../../tune/study-runner.js';
import type { ResolvedModel } from '../../catalog/resolve-model.js';
import { identifyResolvedModel, studyModelFields } from '../../store/adopt-model.js';
import { studyGpuFields } from '../../store/adopt-gpu.js';
import { gpuFigures } from '../../catalog/gpu-file.js';
import { OFFLINE_FLAG, resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { formatSummary, summarizeStudy } from '../../tune/summary.js';
import { explainStudyPick } from '../../tune/explain-study.js';
import { explanationLines } from '../../optimize/simplify-text.js';
import { priorSimulator } from '../../calibration/prior-simulator.js';
import { studyRules } from '../../tune/failure-book.js';
import { traceWorkloadOfFile } from '../../trace/index.js';
import { loadYamlFile } from '../../util/yaml.js';
import { formatZodIssues } from '../../util/zod-issues.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { assertOutputDir, writeStudyReport } from '../report-files.js';
import { studyProgress } from '../study-progress.js';
import { usage } from '../usage/tune.js';



const flags = {
  study: { type: 'string' },
  space: { type: 'string' },
  gpu: { type: 'string' },
  gpus: { type: 'string' },
  model: { type: 'string' },
  workload: { type: 'string' },
  trace: { type: 'string' },
  'trace-speed': { type: 'string' },
  'trace-limit': { type: 'string' },
  slo: { type: 'string' },
  target: { type: 'string' },
  profile: { type: 'string' },
  'vllm-version': { type: 'string' },
  command: { type: 'string' },
  'command-timeout-s': { type: 'string' },
  'slurm-config': { type: 'string' },
  endpoint: { type: 'string' },
  'api-key-env': { type: 'string' },
  'ca-cert': { type: 'string' },
  insecure: { type: 'boolean' },
  'vllm-bin': { type: 'string' },
  'vllm-port': { type: 'string' },
  'budget-trials': { type: 'string' },
  'budget-hours': { type: 'string' },
  parallel: { type: 'string' },
  seed: { type: 'string' },
  sampler: { type: 'string' },
  objective: { type: 'string' },
  'report-dir': { type: 'string' },
  enqueue: { type: 'string', multiple: true },
  'keep-precision': { type: 'boolean' },
  'no-report': { type: 'boolean' },
  db: { type: 'string' },
  json: { type: 'boolean' },
  ...OFFLINE_FLAG,
} as const;

type Values = ReturnType<typeof parseFlags<typeof flags>>['values'];

function targetSpec(v: Values, dbPath: string, io: CliIo): TargetSpec {
  const cwd = io.cwd;
  const kind = v.target ?? (v['slurm-config'] !== undefined ? 'slurm' : 'sim');
  const release = vllmVersionFlag(v['vllm-version']);
  if (release !== undefined && kind !== 'sim') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--vllm-version names the release the simulator imitates (--target sim); --target ${kind} measures a server that runs its own`, { details: { field: 'vllm-version' } });
  }
  const raw = (() => {
    switch (kind) {
      case 'sim':
        return { kind, ...(v.profile === undefined ? {} : { profile: parseProfileChoice(v.profile) }), ...(release === undefined ? {} : { vllm_version: release }) };
      case 'vllm':
        return {
          kind,
          executable: v['vllm-bin'] ?? 'vllm',
          base_port: numberFlag(v['vllm-port'], 'vllm-port', { int: true, min: 1024, max: 65000 }) ?? 18000,
          state_dir: join(dbPath, '..', 'servers'),
        };
      case 'endpoint': {
        const ep = parseEndpoint(requireFlag(v.endpoint, 'endpoint'));
        // Refused here, before a study exists, rather than trial by trial.
        assertAllowedTarget(ep, io.env);
        const url = ep.url;
        return {
          kind,
          url,
          ...(v['api-key-env'] === undefined ? {} : { api_key_env: v['api-key-env'] }),
          ...(v['ca-cert'] === undefined ? {} : { ca_cert: resolve(cwd, v['ca-cert']) }),
          ...(v.insecure === true ? { insecure: true } : {}),
        };
      }
      case 'command': {
        const timeoutS = numberFlag(v['command-timeout-s'], 'command-timeout-s', { min: 1, max: 7 * 24 * 3600 });
        return {
          kind,
          command: requireFlag(v.command, 'command'),
          ...(timeoutS === undefined ? {} : { timeout_ms: Math.round(timeoutS * 1000) }),
          // As the vllm target's servers: a resume stops the harnesses a killed `tune` left running.
          state_dir: join(dbPath, '..', 'servers'),
        };
      }
      case 'slurm':
        return { kind, ...loadYamlFile(resolve(cwd, requireFlag(v['slurm-config'], 'slurm-config')), SlurmConfig, 'LMB_ERR_CONFIG_INVALID') };
      default:
        throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--target must be sim, vllm, endpoint, command or slurm, got "${kind}"`, { details: { field: 'target' } });
    }
  })();
  const res = TargetSpec.safeParse(raw);
  if (!res.success) {
    const field = res.error.issues[0]?.path.join('.') ?? '';
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', formatZodIssues(res.error.issues, `--target ${kind}`), { details: { field: field || 'target' } });
  }
  return res.data;
}

function parseSlo(text: string | undefined, fallback: Slo | undefined): Slo {
  if (text === undefined) return fallback ?? {};
  return parseSloString(text);
}

interface ObjectiveChoice {
  readonly objective: StudyObjective;
  readonly measure: 'fixed' | 'max_rate';
}

/** --objective: what the study is for and how a trial is measured (`max-rate`: goodput by a rate search). */
function objectiveChoice(raw: string | undefined): ObjectiveChoice {
  switch (raw) {
    case undefined:
    case 'goodput':
    case 'throughput':
      return { objective: 'goodput', measure: 'fixed' };
    case 'tokens_per_joule':
    case 'usd_per_mtok':
      return { objective: raw, measure: 'fixed' };
    case 'max-rate':
      return { objective: 'goodput', measure: 'max_rate' };
    default:
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--objective must be goodput, tokens_per_joule, usd_per_mtok or max-rate (throughput is goodput), got "${raw}"`, { details: { field: 'objective' } });
  }
}

/** The --objective value a stored study stands for. */
function storedObjectiveFlag(spec: StudySpec): string {
  return spec.measure === 'max_rate' ? 'max-rate' : studyObjectiveOf(spec);
}

/**
 * The study's workload: a workload file, or a trace whose requests the spec then carries (so a resume,
 * a Slurm job and the report replay the same ones whatever becomes of the file).
 */
function workloadOfFlags(v: Values, cwd: string): Workload {
  if (v.trace === undefined) {
    for (const k of ['trace-speed', 'trace-limit'] as const) if (v[k] !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${k} goes with --trace FILE`, { details: { field: k } });
    return loadYamlFile(resolve(cwd, requireFlag(v.workload, 'workload')), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  }
  if (v.workload !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--workload and --trace both describe the traffic; give one', { details: { field: 'trace' } });
  const speed = numberFlag(v['trace-speed'], 'trace-speed', { min: 1e-6, max: 1e6 });
  const limit = numberFlag(v['trace-limit'], 'trace-limit', { int: true, min: 1, max: 1_000_000 });
  return traceWorkloadOfFile(resolve(cwd, v.trace), v.trace, { speed, limit, embed: true }).workload;
}

function specFromFlags(v: Values, study: { name: string; target: TargetSpec; spacePath: string; model: string; dbPath: string }, io: CliIo): StudySpec {
  const { name, target, spacePath, model } = study;
  const cwd = io.cwd;
  const hw = resolveGpuFlag(requireFlag(v.gpu, 'gpu'), io, study.dbPath);
  const workload = workloadOfFlags(v, cwd);
  const budgetHours = numberFlag(v['budget-hours'], 'budget-hours', { min: 0.001 });
  const choice = objectiveChoice(v.objective);
  if (choice.measure === 'max_rate' && workload.trace?.data !== undefined) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--objective max-rate searches the request rate; a trace brings its own arrival times (tune its fit for max-rate: lm-bench workload from-trace, then --workload)', { details: { field: 'objective' } });
  }
  const res = StudySpec.safeParse({
    name,
    space: spacePath,
    ...studyGpuFields(hw, numberFlag(requireFlag(v.gpus, 'gpus'), 'gpus', { int: true, min: 1, max: 64 }) ?? 1, defaultCatalog()),
    model,
    workload,
    slo: parseSlo(v.slo, workload.slo),
    objectives: objectivesFor(choice.objective),
    objective: choice.objective,
    target: JSON.stringify(target),
    seed: numberFlag(v.seed, 'seed', { int: true, min: 0 }) ?? 0,
    budget_trials: numberFlag(requireFlag(v['budget-trials'], 'budget-trials'), 'budget-trials', { int: true, min: 1, max: 10_000 }),
    budget_hours: budgetHours ?? null,
    parallel: numberFlag(v.parallel, 'parallel', { int: true, min: 1, max: 32 }) ?? 1,
    measure: choice.measure,
    ...(v['keep-precision'] === true ? { keep_precision: true } : {}),
  });
  if (res.success) return res.data;
  const field = res.error.issues[0]?.path.join('.') ?? '';
  throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', formatZodIssues(res.error.issues, 'study settings'), { details: { field } });
}

const STUDY_NAME = /^[\w.-]{1,200}$/;

/** The flags a study's stored settings come from; on a resume, one given with another value is refused. */
function resumeConflicts(v: Values, spec: StudySpec, target: TargetSpec | null): string[] {
  const out: string[] = [];
  const differs = (flag: string, given: unknown, stored: unknown): void => {
    if (given !== undefined && JSON.stringify(given) !== JSON.stringify(stored)) out.push(`--${flag} ${JSON.stringify(given)} (the study has ${JSON.stringify(stored)})`);
  };
  differs('gpus', numberFlag(v.gpus, 'gpus', { int: true, min: 1, max: 64 }), spec.hardware.count);
  differs('budget-trials', numberFlag(v['budget-trials'], 'budget-trials', { int: true, min: 1, max: 10_000 }), spec.budget_trials);
  differs('budget-hours', numberFlag(v['budget-hours'], 'budget-hours', { min: 0.001 }), spec.budget_hours);
  differs('parallel', numberFlag(v.parallel, 'parallel', { int: true, min: 1, max: 32 }), spec.parallel);
  differs('seed', numberFlag(v.seed, 'seed', { int: true, min: 0 }), spec.seed);
  differs('slo', v.slo === undefined ? undefined : parseSlo(v.slo, undefined), spec.slo);
  const given = v.objective === undefined ? undefined : objectiveChoice(v.objective);
  differs('objective', given === undefined ? undefined : given.measure === 'max_rate' ? 'max-rate' : given.objective, storedObjectiveFlag(spec));
  differs('keep-precision', v['keep-precision'], spec.keep_precision ?? false);
  if (target !== null) {
    const stored = TargetSpec.parse(JSON.parse(spec.target));
    if (target.kind === 'sim' && stored.kind === 'sim') {
      // The stored spec carries the profile bound at creation; only an explicit other choice differs.
      const storedChoice = stored.profile_source?.startsWith('default') === true ? 'default' : 'stored';
      if (typeof target.profile === 'string' && target.profile !== 'auto' && target.profile !== storedChoice) {
        out.push(`--profile ${target.profile} (the study prices with ${stored.profile_source ?? 'the default profile'})`);
      }
      const release = releaseConflict(target, stored);
      if (release !== null) out.push(release);
    } else differs('target', target, JSON.parse(spec.target));
  }
  return out;
}

/** A study resumed with flags (`conflicts`, each the flag and the stored value) other than its stored settings. */
function studyKeepsItsSettings(name: string, conflicts: readonly string[]): LmBenchError {
  return new LmBenchError('LMB_ERR_STUDY_EXISTS', `study "${name}" resumes with its stored settings; these flags differ: ${conflicts.join('; ')} (start another --study to change them)`, { details: { field: 'study' } });
}

/** A sim study resumed with another `--vllm-version` than it was created with (none given: it keeps its own). */
function releaseConflict(given: Extract<TargetSpec, { kind: 'sim' }>, stored: Extract<TargetSpec, { kind: 'sim' }>): string | null {
  if (given.vllm_version === undefined || given.vllm_version === stored.vllm_version) return null;
  return `--vllm-version ${given.vllm_version} (the study imitates ${stored.vllm_version === undefined ? 'a current vLLM' : `vLLM ${stored.vllm_version}`})`;
}

/**
 * The target a study runs against, with a sim target's profile bound from the store: a study that
 * exists keeps the profile it was created with unless the command asks for another.
 */
function boundTarget(given: TargetSpec, existing: StudySpec | null, store: Store, hw: Hardware): TargetSpec {
  const stored = existing === null ? null : TargetSpec.parse(JSON.parse(existing.target));
  if (existing !== null && given.kind === 'sim' && stored?.kind === 'sim') {
    const release = releaseConflict(given, stored);
    if (release !== null) throw studyKeepsItsSettings(existing.name, [release]);
    if (given.profile === undefined || given.profile === 'auto') return stored;
  }
  return bindSimProfile(given, store, defaultCatalog(), hw);
}

/**
 * The study's model: the spec a study of this name began with when the same model is named again (a
 * changed config.json in the cache does not change a running study's model; said on stderr), else the
 * resolved one under the id the history gives it (a second checkpoint of one name gets an id of its own).
 */
function withModel(given: StudySpec, resolved: ResolvedModel, existing: StudySpec | null, store: Store, io: CliIo): StudySpec {
  const kept = existing?.model_spec;
  if (existing !== null && kept !== undefined && kept.hf_name.toLowerCase() === resolved.spec.hf_name.toLowerCase()) {
    if (resolved.config_hash !== (existing.model_config_hash ?? null)) {
      io.stderr.write(`lm-bench tune: ${resolved.location} differs from the config.json study "${given.name}" began with; the study keeps its model (${existing.model})\n`);
    }
    return { ...given, model: existing.model, model_spec: kept, model_config_hash: existing.model_config_hash ?? null };
  }
  // Stored with the study when it is created (study-runner.ts), not now: a refused study stores nothing.
  return { ...given, ...studyModelFields(identifyResolvedModel(store, resolved, defaultCatalog())) };
}

/**
 * The study's GPU: the datasheet a study of this name began with when the same GPU id is named again (an
 * edited file does not change a running study's GPU; said on stderr), else the one given.
 */
function withGpu(given: StudySpec, existing: StudySpec | null, io: CliIo): StudySpec {
  const kept = existing?.hardware_spec;
  if (kept === undefined || given.hardware_spec?.id !== kept.id) return given;
  if (gpuFigures(given.hardware_spec) !== gpuFigures(kept)) {
    io.stderr.write(`lm-bench tune: the datasheet of ${kept.id} differs from the one study "${given.name}" began with; the study keeps its GPU\n`);
  }
  return { ...given, hardware_spec: kept };
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values: v } = parseFlags(argv, flags);
  const name = requireFlag(v.study, 'study');
  if (!STUDY_NAME.test(name)) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--study "${name.slice(0, 60)}${name.length > 60 ? '…' : ''}" must be 1–200 letters, digits, '_', '.' or '-' (it names reports/<study>/)`, { details: { field: 'study' } });
  }
  // Every flag is checked before the store is touched: a bad value never starts (or resumes) a study.
  const dbPath = v.db ?? defaultDbPath(io);
  const target = v.target === undefined && v.endpoint === undefined && v.command === undefined && v['slurm-config'] === undefined && v['vllm-version'] === undefined ? null : targetSpec(v, dbPath, io);
  const sampler = v.sampler === undefined || v.sampler === 'surrogate' ? 'surrogate' : v.sampler === 'random' ? 'random' : null;
  if (sampler === null) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--sampler must be surrogate or random, got "${v.sampler ?? ''}"`, { details: { field: 'sampler' } });
  if (v['no-report'] !== true) assertOutputDir(resolve(io.cwd, v['report-dir'] ?? join('reports', name)), v['report-dir'] === undefined ? 'study' : 'report-dir');
  const enqueue = (v.enqueue ?? []).map((text) => parseKnobAssignments(text.split(',').map((p) => p.trim()).filter((p) => p !== ''), {}, 'enqueue'));
  const deploymentGiven = v.gpu !== undefined || v.model !== undefined || v.workload !== undefined || v.trace !== undefined;
  // The model is resolved (a file read, perhaps the hub asked) before the store is opened: a name that
  // does not resolve fails with its code and stores nothing.
  const resolvedModel = deploymentGiven ? await resolveModelFlag(requireFlag(v.model, 'model'), io, v.offline) : null;
  const fromFlags =
    resolvedModel === null
      ? null
      : specFromFlags(
          v,
          { name, target: target ?? targetSpec(v, dbPath, io), spacePath: v.space === undefined ? join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml') : resolve(io.cwd, v.space), model: resolvedModel.spec.id, dbPath },
          io,
        );
  const store = openStore(dbPath);
  try {
    const existing = store.findStudy(name);
    if (existing === null && fromFlags === null) {
      throw new LmBenchError('LMB_ERR_STUDY_NOT_FOUND', `no study "${name}" in ${dbPath}; a new study needs --gpu, --gpus, --model, --workload (or --trace) and --budget-trials`, { details: { field: 'study' } });
    }
    let spec: StudySpec;
    if (fromFlags === null && existing !== null) {
      const conflicts = resumeConflicts(v, existing.spec, target);
      if (conflicts.length > 0) {
        throw studyKeepsItsSettings(name, conflicts);
      }
      spec = existing.spec;
    } else {
      const given = withGpu(withModel(fromFlags as StudySpec, resolvedModel as ResolvedModel, existing?.spec ?? null, store, io), existing?.spec ?? null, io);
      // The study's GPU before the profile is bound to it (a kept datasheet over the file just read).
      registerStudySpecs(given);
      spec = { ...given, target: JSON.stringify(boundTarget(TargetSpec.parse(JSON.parse(given.target)), existing?.spec ?? null, store, defaultCatalog().gpu(given.hardware.gpu))) };
    }
    registerStudySpecs(spec);
    const resolvedTarget = TargetSpec.parse(JSON.parse(spec.target));
    const space = loadSpace(spec.space);
    const json = v.json === true;
    const ac = new AbortController();
    let interrupts = 0;
    const onSignal = (): void => {
      interrupts++;
      if (interrupts === 1) {
        io.stderr.write(
          resolvedTarget.kind === 'slurm'
            ? '\nlm-bench: cancelling the study\'s Slurm jobs (scancel); the same command resumes the study\n'
            : '\nlm-bench: stopping after the running trials finish (again to quit now; they resume later)\n',
        );
        ac.abort('cancel');
      } else process.exit(130);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const progress = studyProgress({ io, store, spec, model: defaultCatalog().model(spec.model), json });
    try {
      const { study, summary } = await runStudy({
        store,
        catalog: defaultCatalog(),
        space,
        spec,
        target: resolvedTarget,
        now: Date.now,
        sampler,
        enqueue,
        signal: ac.signal,
        onEvent: progress.onEvent,
        ...(resolvedModel === null ? {} : { modelSource: { origin: resolvedModel.origin, location: resolvedModel.location } }),
      });
      progress.finish();
      const out = summarizeStudy({ study: study.study, trials: study.trials(), front: study.bestTrials(), model: defaultCatalog().model(spec.model), hardware: defaultCatalog().gpu(spec.hardware.gpu), stopReason: summary.reason, numericsChanges: (c) => space.numericsChanges(c), rules: studyRules(store, defaultCatalog(), study.id) });
      // The pick defended: flags within the noise back at vLLM's defaults, each remaining one's gain
      // (computed once, for the summary and the report alike).
      const explanation = explainStudyPick({ summary: out, trials: study.trials(), spec, space, catalog: defaultCatalog(), simulator: priorSimulator(store, defaultCatalog(), { ...spec, vllmVersion: simSpecRelease(resolvedTarget) }) });
      let reportFile: string | null = null;
      if (v['no-report'] !== true && summary.reason !== 'interrupted') {
        if (!json) io.stderr.write('lm-bench tune: writing the report…\n');
        const { files } = await writeStudyReport(store, spec.name, resolve(io.cwd, v['report-dir'] ?? join('reports', spec.name)), { explanation });
        reportFile = files[0] ?? null;
      }
      if (json) writeJson(io, { ...out, explanation, report: reportFile });
      else io.stdout.write(`${formatSummary(out)}\n${explanationLines(explanation).join('\n')}\n\n${reportFile === null ? '' : `Report: ${reportFile}\n`}History and trials are in ${dbPath}.\n`);
      return summary.reason === 'interrupted' ? 130 : 0;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  } finally {
    store.close();
  }
}

export const command: Command = { name: 'tune', summary: 'run a tuning study', usage, run };
