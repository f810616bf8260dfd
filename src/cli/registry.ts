import type { Command } from './io.js';

/**
 * Commands are data: a name, a one-line summary and lazy loaders, so `lm-bench --help` and a
 * simple command never pay for loading XGBoost, SQLite or fastify, and `lm-bench <command> --help`
 * loads the command's usage text (cli/usage/) and nothing of the command itself.
 */
export interface CommandEntry {
  readonly summary: string;
  readonly load: () => Promise<{ command: Command }>;
  readonly usage: () => Promise<{ usage: string }>;
}

export const COMMANDS = {
  demo: { summary: 'the main job on the embedded simulator (what `npm start` runs)', load: () => import('./commands/demo.js'), usage: () => import('./usage/demo.js') },
  sim: { summary: 'simulated vLLM engine: `sim run` in virtual time, `sim serve` over HTTP', load: () => import('./commands/sim.js'), usage: () => import('./usage/sim.js') },
  run: { summary: 'load runner against an OpenAI-compatible server (like `vllm bench serve`)', load: () => import('./commands/run.js'), usage: () => import('./usage/run.js') },
  space: { summary: 'search space: knobs, rules and what pruning removes', load: () => import('./commands/space.js'), usage: () => import('./usage/space.js') },
  ingest: { summary: 'ingest benchmark results (vllm bench, GuideLLM, AIPerf, genai-perf, SGLang, inference-perf, llm-d, ML.ENERGY, lm-bench) into the store', load: () => import('./commands/ingest.js'), usage: () => import('./usage/ingest.js') },
  surrogate: { summary: 'surrogate models: `surrogate train` and `surrogate eval` (k-fold MAPE, R², knob importance)', load: () => import('./commands/surrogate.js'), usage: () => import('./usage/surrogate.js') },
  tune: { summary: 'an unattended tuning study: propose, measure, learn, until the budget is spent', load: () => import('./commands/tune.js'), usage: () => import('./usage/tune.js') },
  report: { summary: 'the HTML deployment report of a tuning study, with one SVG per plot', load: () => import('./commands/report.js'), usage: () => import('./usage/report.js') },
  serve: { summary: 'the HTTP service: recommendations, studies and history over /v1 (loopback by default)', load: () => import('./commands/serve.js'), usage: () => import('./usage/serve.js') },
  'trial-run': { summary: 'one trial inside a Slurm batch job (what `tune --target slurm` submits)', load: () => import('./commands/trial-run.js'), usage: () => import('./usage/trial-run.js') },
  recommend: { summary: 'the best predicted configuration under the SLOs, with intervals and the Pareto set', load: () => import('./commands/recommend.js'), usage: () => import('./usage/recommend.js') },
  plan: { summary: 'which GPUs, how many, at what price: deployments that serve a traffic within the SLOs, ranked', load: () => import('./commands/plan.js'), usage: () => import('./usage/plan.js') },
  export: { summary: 'write a study\'s trials or stored runs as llm-d Benchmark Report v0.2 or `vllm bench serve` JSON', load: () => import('./commands/export.js'), usage: () => import('./usage/export.js') },
  workload: { summary: 'workload files from what you have: `workload from-trace TRACE` derives one from a request trace', load: () => import('./commands/workload.js'), usage: () => import('./usage/workload.js') },
  models: { summary: 'the LLM a --model name resolves to: `models show MODEL` (spec, origin, config hash, sizes)', load: () => import('./commands/models.js'), usage: () => import('./usage/models.js') },
  // Deprecated alias of `surrogate` for one release (prints a note on stderr); listed last in --help.
  model: { summary: 'deprecated: the old name of `surrogate` (goes in the next release)', load: () => import('./commands/model.js'), usage: async () => ({ usage: `Deprecated: \`lm-bench model\` is now \`lm-bench surrogate\`.\n${(await import('./usage/surrogate.js')).usage}` }) },
} as const satisfies Record<string, CommandEntry>;

export type CommandName = keyof typeof COMMANDS;

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}
