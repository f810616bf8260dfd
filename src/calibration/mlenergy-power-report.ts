import type { PowerProfile } from '../domain/index.js';
import { biasText as biasOf, mapeText as mapeOf, relError } from './report-format.js';
import { fitPower, leaveOneOut, powerErrors, windowPowerW, type PowerObservation } from './mlenergy-power.js';

// A row whose measured power or throughput is 0 has no relative error here: it is left out, not Infinity.
const finite = (xs: readonly (number | null)[]): (number | null)[] => xs.map((x) => (x !== null && Number.isFinite(x) ? x : null));
const mapeText = (xs: readonly (number | null)[]): string => mapeOf(finite(xs));
const biasText = (xs: readonly (number | null)[]): string => biasOf(finite(xs));

/**
 * The calibration page's power section (scripts/calibrate.ts): the power model's parameters, its error
 * on ML.ENERGY's measured power and joules per token (the simulator's own figures, per-step cap and
 * all), and leave-one-model-out and leave-one-GPU-out refits (from the window sums: a refit costs no
 * simulation). Pure: the rows come in simulated.
 */
export interface PowerReportRow {
  readonly obs: PowerObservation;
  /** The simulator's figures under the reported profile (null: no energy came back). */
  readonly predictedPowerW: number | null;
  readonly predictedJoulesPerToken: number | null;
}

const jMeasured = (o: PowerObservation): number => o.measuredPowerW / o.measuredThroughput;
const groupKey = (o: PowerObservation): string => `${o.model} | ${o.gpu}`;
const fmtW = (p: PowerProfile): string => `busy ${p.busy_weight.toFixed(3)}, compute ${p.compute_weight.toFixed(3)}, memory ${p.memory_weight.toFixed(3)}`;

/** MAPE of power and J/token of the observations under one profile per observation (the window formula). */
function looLines(obs: readonly PowerObservation[], by: (o: PowerObservation) => string, profiles: ReadonlyMap<string, PowerProfile>, label: string): string {
  const lines: string[] = [];
  for (const k of new Set(obs.map(by))) {
    const g = obs.filter((o) => by(o) === k);
    const p = profiles.get(k) as PowerProfile;
    const e = g.map((o) => powerErrors(o, p));
    for (const gpu of new Set(g.map((o) => o.gpu))) {
      const idx = g.map((o, i) => (o.gpu === gpu ? i : -1)).filter((i) => i >= 0);
      lines.push(`| ${label}: ${k} | ${gpu} | ${idx.length} | ${fmtW(p)} | ${mapeText(idx.map((i) => e[i]?.power ?? null))} | ${mapeText(idx.map((i) => e[i]?.joulesPerToken ?? null))} |`);
    }
  }
  const all = obs.map((o) => powerErrors(o, profiles.get(by(o)) as PowerProfile));
  lines.push(`| **${label}, all** | | ${obs.length} | | ${mapeText(all.map((e) => e.power))} | ${mapeText(all.map((e) => e.joulesPerToken))} |`);
  return lines.join('\n');
}

export function powerSection(rows: readonly PowerReportRow[], profile: PowerProfile, opts: { readonly idleSource: string; readonly refitted: boolean }): string {
  const obs = rows.map((r) => r.obs);
  const idle = profile.idle_tdp_frac;
  const lomo = leaveOneOut(obs, (o) => o.model, idle);
  const logo = leaveOneOut(obs, (o) => o.gpu, idle);
  const keys = [...new Set(obs.map(groupKey))];
  const gpus = [...new Set(obs.map((o) => o.gpu))];
  const exactP = rows.map((r) => relError(r.predictedPowerW, r.obs.measuredPowerW));
  const exactJ = rows.map((r) => relError(r.predictedJoulesPerToken, jMeasured(r.obs)));
  const tput = rows.map((r) => r.obs.predictedThroughput / r.obs.measuredThroughput - 1);
  const linear = obs.map((o) => powerErrors(o, profile));
  const at = (pred: (r: PowerReportRow, i: number) => boolean): number[] => rows.map((r, i) => (pred(r, i) ? i : -1)).filter((i) => i >= 0);
  const line = (label: string, idx: readonly number[]): string =>
    `| ${label} | ${idx.length} | ${mapeText(idx.map((i) => exactP[i] ?? null))} | ${mapeText(idx.map((i) => exactJ[i] ?? null))} | ${biasText(idx.map((i) => exactJ[i] ?? null))} | ${mapeText(idx.map((i) => tput[i] ?? null))} |`;
  const close = at((_, i) => Math.abs(tput[i] ?? Infinity) <= 0.15);
  // The same fit on the simulator's own utilisations (its pace, not the measured one), for comparison.
  const simPace = fitPower(
    obs.map((o) => ({ ...o, measuredThroughput: o.predictedThroughput })),
    idle,
  );
  const simPaceErr = obs.map((o) => powerErrors(o, simPace));
  const simPaceLomo = leaveOneOut(
    obs.map((o) => ({ ...o, measuredThroughput: o.predictedThroughput })),
    (o) => o.model,
    idle,
  );
  const simPaceLomoErr = obs.map((o) => powerErrors(o, simPaceLomo.get(o.model) as PowerProfile));
  /** A weight as the energy of one unit of work on a GPU of this TDP and peak rate, pJ. */
  const joulesPer = (tdpW: number, peakPerS: number, k: 'memory_weight' | 'compute_weight', unit: string): string =>
    `${(((1 - idle) * tdpW * profile[k]) / peakPerS / 1e-12).toFixed(2)} pJ per ${unit}`;
  const example = (gpu: string, tdpW: number): string => {
    const o: PowerObservation = { model: '', gpu, gpus: 1, tdpW, durationS: 1, busyGpuS: 1, computeGpuS: 0, memoryGpuS: 0.6, measuredPowerW: 1, measuredThroughput: 1, predictedThroughput: 1 };
    return `${gpu} ${Math.round(idle * tdpW)} W idle, ${Math.round(windowPowerW(o, profile))} W in a weight-streaming decode step (60% HBM, no tensor work), ${tdpW} W cap`;
  };
  return `## Power and energy (ML.ENERGY, H100 and B200)

ML.ENERGY's \`avg_power_w\` is the **average power of all the run's GPUs together** over its steady-state
window (the window's GPU energy from Zeus, summed over every GPU of the run, ÷ its duration; the data API
calls it \`avg_power_watts\`): the 2-GPU H100 rows reach 1,180 W, above one H100's 700 W TDP, and per GPU
they sit where the 1-GPU rows do. The measured energy per output token is \`avg_power_w\` ÷
\`output_throughput_tok_s\` (both over the same window).

The power model (\`src/physics/power.ts\`): between steps a GPU holding a model draws its idle power; during a
step, P = P_idle + (TDP − P_idle) · min(1, busy_weight · (share of the step running kernels) + compute_weight ·
(tensor utilisation) + memory_weight · (HBM utilisation)), the utilisations being the step's FLOPs and HBM
bytes (weights, activations, KV cache) at the GPU's datasheet peaks over its wall time
(\`src/physics/step-activity.ts\`). Everything is a fraction of the GPU's datasheet TDP (\`data/hardware.yaml\`),
one set for every GPU. The simulator integrates it step by step over ML.ENERGY's window (from max_num_seqs
first tokens to N − max_num_seqs − 1 finishes), as \`sim run\` does for its own runs.

${opts.refitted ? 'Fitted here' : 'Fitted by the last full or `--power` run'} on the ${obs.length} rows (${keys.length} sweeps of (model, GPU), each weighing the
same) by least squares on the relative error of the power, the weights held ≥ 0. The utilisations the fit
reads are the simulated work per token at the **measured** pace (window sums × simulated ÷ measured
throughput): the weights then describe the GPUs rather than the step-time model's error, and a prediction
uses the simulator's own pace. The idle share is not fitted (the saturated runs keep every GPU busy, so it
cannot be told from busy_weight); it is ${idle} of TDP: ${opts.idleSource}.

| parameter | value |
| --- | --- |
| idle_tdp_frac (fixed) | ${idle} |
| busy_weight | ${Number(profile.busy_weight.toPrecision(4))} |
| compute_weight | ${Number(profile.compute_weight.toPrecision(4))} |
| memory_weight | ${Number(profile.memory_weight.toPrecision(4))} |

So: ${gpus.map((g) => example(g, obs.find((o) => o.gpu === g)?.tdpW ?? 0)).join('; ')}. GPUs without a measurement follow from their
datasheet TDP (A100 400 W, H200 700 W, L40S 350 W, …). As energies: on an H100 the memory weight is
${joulesPer(700, 3350e9 * 8, 'memory_weight', 'bit')} of HBM traffic and the compute weight ${joulesPer(700, 989e12, 'compute_weight', 'FLOP')} of bf16 tensor work
(what the fit says, not a measurement of either); a step whose tensor cores pass
${Math.round(((1 - profile.busy_weight) / Math.max(profile.compute_weight, 1e-9)) * 100)}% of the peak is held at TDP (a compute-bound prefill chunk is).

### Error on the fit rows (the simulator's figures, per-step power cap included)

J/token is predicted as the simulated power ÷ the simulated throughput, so its error carries the
throughput's (last column; the step-time model is not refitted here): where the simulator runs faster than
the real server (B200, Qwen3-30B-A3B with EP), the idle and busy share of each token's energy is spread over
too short a time and J/token comes out low.

| model | GPU | rows | power MAPE | J/token MAPE | J/token mean signed | throughput MAPE |
| --- | --- | --- | --- | --- | --- | --- |
${keys.map((k) => line(k, at((r) => groupKey(r.obs) === k))).join('\n')}
${gpus.map((g) => line(`**all** | ${g}`, at((r) => r.obs.gpu === g))).join('\n')}
${line('**all** | both', at(() => true))}

On the ${close.length} rows whose simulated throughput is within 15% of the measured one, J/token MAPE is ${mapeText(close.map((i) => exactJ[i] ?? null))} (power ${mapeText(close.map((i) => exactP[i] ?? null))}): the power model's own share of
the error. The window formula the fit minimises (no per-step cap) gives power MAPE ${mapeText(linear.map((e) => e.power))} and J/token MAPE
${mapeText(linear.map((e) => e.joulesPerToken))} on all the rows.

### Leave one model out, leave one GPU out

Each held-out group predicted by the weights fitted without it (window formula):

| held out | GPU | rows | weights | power MAPE | J/token MAPE |
| --- | --- | --- | --- | --- | --- |
${looLines(obs, (o) => o.model, lomo, 'model')}
${looLines(obs, (o) => o.gpu, logo, 'GPU')}

B200's sweeps are the noisier (Qwen3-14B's power jumps from 709 W to 955 W between max_num_seqs 128 and 256;
Qwen3-8B's falls from 646 W to 494 W between 8 and 32), so weights fitted on B200 alone transfer worse to
H100 than the other way round.

For comparison, the same fit on the simulator's own utilisations (its pace rather than the measured one):
${fmtW(simPace)}; power MAPE ${mapeText(simPaceErr.map((e) => e.power))}, J/token MAPE ${mapeText(simPaceErr.map((e) => e.joulesPerToken))}; leave one model out ${mapeText(simPaceLomoErr.map((e) => e.power))} and ${mapeText(simPaceLomoErr.map((e) => e.joulesPerToken))}. It fits the power a little
closer by absorbing the step-time model's speed errors into the weights, which would then be wrong once those
errors are fixed; the measured-pace weights are kept.
`;
}

/** The power and J/token columns of a row of the page's ML.ENERGY table. */
export function powerColumns(r: PowerReportRow | null): string {
  if (r === null) return '– | – | – | –';
  const f = (x: number | null, d: number): string => (x === null ? '–' : x.toFixed(d));
  return `${f(r.obs.measuredPowerW, 0)} | ${f(r.predictedPowerW, 0)} | ${f(jMeasured(r.obs), 3)} | ${f(r.predictedJoulesPerToken, 3)}`;
}
