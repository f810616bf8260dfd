/** `lm-bench report --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
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
