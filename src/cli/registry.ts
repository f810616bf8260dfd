import type { Command } from './io.js';

/**
 * Commands are data: a name, a one-line summary and a lazy loader, so `lm-bench --help` and a
 * simple command never pay for loading XGBoost, SQLite or fastify.
 */
export interface CommandEntry {
  readonly summary: string;
  readonly load: () => Promise<{ command: Command }>;
}

export const COMMANDS = {
  demo: { summary: 'the main job on the embedded simulator (what `npm start` runs)', load: () => import('./commands/demo.js') },
  sim: { summary: 'simulated vLLM engine: `sim run` in virtual time, `sim serve` over HTTP', load: () => import('./commands/sim.js') },
  run: { summary: 'load runner against an OpenAI-compatible server (like `vllm bench serve`)', load: () => import('./commands/run.js') },
  space: { summary: 'search space: knobs, rules and what pruning removes', load: () => import('./commands/space.js') },
  ingest: { summary: 'ingest benchmark results (vLLM, GuideLLM, genai-perf, lm-bench) into the store', load: () => import('./commands/ingest.js') },
  surrogate: { summary: 'surrogate models: `surrogate train` and `surrogate eval` (k-fold MAPE, R², knob importance)', load: () => import('./commands/surrogate.js') },
  tune: { summary: 'an unattended tuning study: propose, measure, learn, until the budget is spent', load: () => import('./commands/tune.js') },
  report: { summary: 'the HTML deployment report of a tuning study, with one SVG per plot', load: () => import('./commands/report.js') },
  serve: { summary: 'the HTTP service: recommendations, studies and history over /v1 (loopback by default)', load: () => import('./commands/serve.js') },
  'trial-run': { summary: 'one trial inside a Slurm batch job (what `tune --target slurm` submits)', load: () => import('./commands/trial-run.js') },
  recommend: { summary: 'the best predicted configuration under the SLOs, with intervals and the Pareto set', load: () => import('./commands/recommend.js') },
  plan: { summary: 'which GPUs, how many, at what price: deployments that serve a traffic within the SLOs, ranked', load: () => import('./commands/plan.js') },
  export: { summary: 'write a study\'s trials or stored runs as llm-d Benchmark Report v0.2 or `vllm bench serve` JSON', load: () => import('./commands/export.js') },
  workload: { summary: 'workload files from what you have: `workload from-trace TRACE` derives one from a request trace', load: () => import('./commands/workload.js') },
  models: { summary: 'the LLM a --model name resolves to: `models show MODEL` (spec, origin, config hash, sizes)', load: () => import('./commands/models.js') },
  // Deprecated alias of `surrogate` for one release (prints a note on stderr); listed last in --help.
  model: { summary: 'deprecated: the old name of `surrogate` (goes in the next release)', load: () => import('./commands/model.js') },
} as const satisfies Record<string, CommandEntry>;

export type CommandName = keyof typeof COMMANDS;

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}
