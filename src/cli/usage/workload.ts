/** `lm-bench workload --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench workload from-trace TRACE [--out FILE] [--name NAME] [--api completions|chat]
                                     [--trace-speed K] [--trace-limit N] [--json]

Derives a workload file from a request trace (Azure LLM inference CSV, Mooncake/FAST'25 JSONL,
BurstGPT CSV, Splitwise CSV as Vidur ships it, or JSONL of {timestamp_s, input_tokens, output_tokens}):
prompt and output lengths as lognormals clipped to the trace's range with the trace's means, arrivals
as a gamma process at the trace's mean rate with the shape that best fits its inter-arrival gaps (÷ K
with --trace-speed K; times written in whole seconds, as BurstGPT's, are spread over their second, as
a replay sends them), and blocks the trace marks as shared (Mooncake's hash_ids) as shared prefixes.
A workload holds at most 1,000,000 requests: take the first N of a longer trace with --trace-limit N,
which reads the file only as far as those N need.
tune, recommend and plan read the file like any workload; it names its trace (file, sha256, count)
but does not hold its requests: replay those with \`run --trace\`, \`sim run --trace\`, \`tune --trace\`.
Without --out the YAML goes to stdout; --json prints the workload and the trace's figures instead.`;
