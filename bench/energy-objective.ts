// `tune --objective tokens_per_joule` against `--objective goodput` on the simulator (issue 25 §4): two
// studies per seed with the same budget and seed, their picks measured again on the same fresh seeds
// (joules per output token, goodput per GPU, SLO verdicts), and a reference sweep of the pruned space
// that bounds how much lower J/token can go under the SLOs than the goodput-optimal configuration's.
// Writes bench/results/energy-objective.md.
//
//   node --import tsx bench/energy-objective.ts [--seeds 3] [--budget 15] [--reference 300] [--repeats 5]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { checkSlo, StudySpec, Workload, type BenchmarkResult, type ServerConfig, type StudyObjective } from '../src/domain/index.js';
import { objectivesFor } from '../src/optimize/objectives.js';
import { configKey } from '../src/optimize/sampler.js';
import { loadSpace } from '../src/space/index.js';
import { openStore } from '../src/store/index.js';
import { createExecutor } from '../src/targets/executor.js';
import type { TrialInput } from '../src/targets/types.js';
import { featureContext, runStudy } from '../src/tune/study-runner.js';
import { summarizeStudy } from '../src/tune/summary.js';
import { createRng } from '../src/util/rng.js';
import { loadYamlFile } from '../src/util/yaml.js';
import { median } from './lib/stats.js';

const { values: argv } = parseArgs({ options: { seeds: { type: 'string' }, budget: { type: 'string' }, reference: { type: 'string' }, repeats: { type: 'string' } } });
const SEEDS = Number(argv.seeds ?? 3);
const BUDGET = Number(argv.budget ?? 15);
const REFERENCE = Number(argv.reference ?? 300);
/** Fresh simulator seeds each pick is measured on again (the same ones for both picks). */
const REPEATS = Number(argv.repeats ?? 5);

interface Scenario {
  readonly name: string;
  readonly note: string;
  readonly workload: Workload;
}

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const chat = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);
const SCENARIOS: Scenario[] = [
  {
    name: 'Llama-3.1-8B, 1×H100-SXM, chat: 64 users in a closed loop (data/workloads/chat.yaml)',
    note: 'the issue’s case: each user sends the next request when the last one is answered, so a faster configuration also serves more tokens',
    workload: chat,
  },
  {
    name: 'Llama-3.1-8B, 1×H100-SXM, chat at a fixed 10 requests/s (Poisson)',
    note: 'the same requests arriving at a fixed rate: every configuration that keeps up serves the same tokens, so goodput cannot tell them apart and J/token can',
    workload: { ...chat, name: 'chat-10rps', description: 'ShareGPT-like chat at 10 requests/s (Poisson)', arrival: { kind: 'poisson', rate_rps: 10 } },
  },
];
const GPU = 'H100-SXM';
const MODEL = 'llama-3.1-8b';

function specFor(s: Scenario, seed: number, objective: StudyObjective, name: string): StudySpec {
  return StudySpec.parse({
    name,
    space: join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'),
    hardware: { gpu: catalog.gpu(GPU).id, count: 1 },
    model: MODEL,
    workload: s.workload,
    slo: s.workload.slo ?? {},
    objectives: objectivesFor(objective),
    objective,
    target: '{"kind":"sim"}',
    seed,
    budget_trials: BUDGET,
    budget_hours: null,
    parallel: 1,
  });
}

interface Measured {
  readonly jPerToken: number | null;
  readonly goodputPerGpu: number;
  readonly meetsSlo: boolean;
}

const meets = (spec: StudySpec, r: BenchmarkResult): boolean => r.failed === 0 && checkSlo(spec.slo, r).every((c) => c.ok);

/** Each configuration simulated on `seeds` (one run per seed, in the trial worker a study uses). */
async function measure(spec: StudySpec, configs: readonly ServerConfig[], seeds: readonly number[]): Promise<Measured[][]> {
  const ex = createExecutor({ kind: 'sim' }, 2);
  try {
    return await Promise.all(
      configs.map((config, i) =>
        Promise.all(
          seeds.map(async (seed, k) => {
            const input: TrialInput = { trial_id: i * seeds.length + k + 1, study: 'ref', seed, config, workload: spec.workload, hardware: spec.hardware, model: spec.model, slo: spec.slo };
            const out = await ex.run(input);
            if (out.status !== 'ok') return { jPerToken: null, goodputPerGpu: 0, meetsSlo: false };
            const ok = meets(spec, out.result);
            return { jPerToken: out.result.energy?.energy_per_output_token_j ?? null, goodputPerGpu: ok ? out.result.output_throughput / spec.hardware.count : 0, meetsSlo: ok };
          }),
        ),
      ),
    );
  } finally {
    await ex.close();
  }
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const jOf = (ms: readonly Measured[]): number => mean(ms.map((m) => m.jPerToken ?? Number.NaN));
const gOf = (ms: readonly Measured[]): number => mean(ms.map((m) => m.goodputPerGpu));
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
const knobs = (c: ServerConfig): string => Object.entries(c).filter(([k]) => ['max_num_seqs', 'max_num_batched_tokens', 'quantization', 'kv_cache_dtype', 'enforce_eager', 'enable_chunked_prefill'].includes(k)).map(([k, v]) => `${k}=${String(v)}`).join(' ') || '(vLLM defaults)';

const lines: string[] = [];
const out = (s = ''): void => {
  lines.push(s);
  console.log(s);
};
out('# Energy objective: tokens_per_joule against goodput');
out();
out(`Command: \`node --import tsx bench/energy-objective.ts --seeds ${SEEDS} --budget ${BUDGET} --reference ${REFERENCE} --repeats ${REPEATS}\` (${new Date().toISOString().slice(0, 10)}, 2-core machine, simulator target with data/sim-profile.yaml's power model).`);
out();
out(`Per seed, two \`tune\` studies of ${BUDGET} trials with the same seed (so the same trial seeds): \`--objective goodput\` (the most output tokens/s per GPU under the SLOs) and \`--objective tokens_per_joule\` (the fewest joules per output token under the SLOs). Each study's pick is its summary's recommendation; both picks are then simulated again on the same ${REPEATS} fresh seeds, and the table gives their means (J/token of all the deployment's GPUs over ML.ENERGY's steady-state window; goodput = output tokens/s per GPU of runs meeting the SLOs, 0 for a run that misses). The reference is ${REFERENCE} configurations sampled from the pruned space (seeded) and vLLM's defaults, each simulated once: among those meeting the SLOs, the lowest J/token against the J/token of the one with the most goodput, the room there is. SLOs: the workload's (p99 TTFT ≤ ${chat.slo?.ttft_p99_ms ?? '–'} ms, p99 ITL ≤ ${chat.slo?.itl_p99_ms ?? '–'} ms). Done-when (issue 25 §4): the tokens_per_joule pick's J/token ≥ 20% below the goodput pick's while meeting the SLOs, or numbers showing no such configuration exists.`);

for (const s of SCENARIOS) {
  const t0 = Date.now();
  const base = specFor(s, 0, 'goodput', 'ref');
  const ctx = featureContext(base, catalog);
  const refConfigs = [{}, ...space.sample(REFERENCE, createRng(4242), ctx)];
  const ref = (await measure(base, refConfigs, [900_001])).map((ms) => ms[0] as Measured);
  const feasible = ref.map((m, i) => ({ m, i })).filter((x) => x.m.meetsSlo && x.m.jPerToken !== null);
  const bestG = [...feasible].sort((a, b) => b.m.goodputPerGpu - a.m.goodputPerGpu)[0];
  const bestJ = [...feasible].sort((a, b) => (a.m.jPerToken ?? 0) - (b.m.jPerToken ?? 0))[0];
  const room = bestG === undefined || bestJ === undefined ? null : 1 - (bestJ.m.jPerToken ?? 0) / (bestG.m.jPerToken ?? 1);

  const rows: { seed: number; g: Measured[]; e: Measured[]; gCfg: ServerConfig; eCfg: ServerConfig; same: boolean; gStudyJ: number | null; eStudyJ: number | null }[] = [];
  for (let seed = 1; seed <= SEEDS; seed++) {
    const picks: Partial<Record<StudyObjective, { config: ServerConfig; studyJ: number | null }>> = {};
    for (const objective of ['goodput', 'tokens_per_joule'] as const) {
      const spec = specFor(s, seed, objective, `${objective}-${seed}`);
      const store = openStore(':memory:');
      const { study } = await runStudy({ store, catalog, space, spec, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false });
      const sum = summarizeStudy({ study: study.study, trials: study.trials(), front: study.bestTrials(), model: catalog.model(MODEL), stopReason: null, prices: null });
      const r = sum.recommendation;
      if (r !== null) picks[objective] = { config: r.config, studyJ: r.measured.energy_per_output_token_j };
    }
    const g = picks.goodput;
    const e = picks.tokens_per_joule;
    if (g === undefined || e === undefined) {
      out(`(seed ${seed}: a study found no configuration meeting the SLOs)`);
      continue;
    }
    const seeds = Array.from({ length: REPEATS }, (_, k) => 800_000 + seed * 100 + k);
    const [gm, em] = await measure(base, [g.config, e.config], seeds);
    rows.push({ seed, g: gm as Measured[], e: em as Measured[], gCfg: g.config, eCfg: e.config, same: configKey(g.config) === configKey(e.config), gStudyJ: g.studyJ, eStudyJ: e.studyJ });
  }

  out();
  out(`## ${s.name}`);
  out();
  out(`${s.note[0]?.toUpperCase() ?? ''}${s.note.slice(1)}. (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  out();
  out('| seed | goodput pick: J/token | goodput/GPU | meets SLOs | tokens_per_joule pick: J/token | goodput/GPU | meets SLOs | J/token change | same configuration |');
  out('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    const jg = jOf(r.g);
    const je = jOf(r.e);
    // Knobs that cannot matter here (a batch limit above the 64 users, a token budget above every prompt) make two configurations run identically.
    const identical = r.g.every((m, k) => m.jPerToken === r.e[k]?.jPerToken && m.goodputPerGpu === r.e[k]?.goodputPerGpu);
    out(`| ${r.seed} | ${jg.toFixed(4)} | ${gOf(r.g).toFixed(0)} | ${r.g.filter((m) => m.meetsSlo).length}/${REPEATS} | ${je.toFixed(4)} | ${gOf(r.e).toFixed(0)} | ${r.e.filter((m) => m.meetsSlo).length}/${REPEATS} | ${pct((je / jg - 1) * 100)} | ${r.same ? 'yes' : identical ? 'no, but equivalent here (identical runs)' : 'no'} |`);
  }
  const changes = rows.map((r) => (jOf(r.e) / jOf(r.g) - 1) * 100);
  const allMeet = rows.every((r) => r.e.every((m) => m.meetsSlo));
  out();
  out(`Median J/token change of the tokens_per_joule pick against the goodput pick: ${changes.length === 0 ? '–' : pct(median(changes))} (per seed ${changes.map(pct).join(', ')}); the tokens_per_joule picks ${allMeet ? 'met the SLOs on every re-measurement' : 'missed the SLOs on some re-measurements'}. Median goodput per GPU: goodput picks ${median(rows.map((r) => gOf(r.g))).toFixed(0)}, tokens_per_joule picks ${median(rows.map((r) => gOf(r.e))).toFixed(0)} tok/s.`);
  out();
  if (bestG !== undefined && bestJ !== undefined && room !== null) {
    out(
      `Reference (${refConfigs.length} configurations, ${feasible.length} meeting the SLOs): the most goodput, ${bestG.m.goodputPerGpu.toFixed(0)} tok/s/GPU, costs ${(bestG.m.jPerToken ?? 0).toFixed(4)} J/token; the fewest joules, ${(bestJ.m.jPerToken ?? 0).toFixed(4)} J/token (at ${bestJ.m.goodputPerGpu.toFixed(0)} tok/s/GPU), ${(room * 100).toFixed(1)}% below it. ${room >= 0.2 ? 'A configuration 20% below exists in the sample.' : 'No configuration in the sample meeting the SLOs is 20% below the goodput-optimal one’s J/token.'}`,
    );
    out(`Their knobs: most goodput ${knobs(refConfigs[bestG.i] as ServerConfig)}; fewest joules ${knobs(refConfigs[bestJ.i] as ServerConfig)}.`);
  }
  out();
  out(`Picks per seed (knobs that differ most): ${rows.map((r) => `seed ${r.seed}: goodput ${knobs(r.gCfg)} | tokens_per_joule ${knobs(r.eCfg)}`).join('; ')}.`);
}
mkdirSync(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(PROJECT_ROOT, 'bench', 'results', 'energy-objective.md'), `${lines.join('\n')}\n`);
