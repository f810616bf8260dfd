/** `lm-bench demo --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage: lm-bench demo [--model M] [--gpu G] [--gpus N] [--workload FILE] [--trials N] [--parallel K] [--seed S]
                     [--offline] [--db PATH] [--out DIR] [--json]

What \`npm start\` runs: a short tuning study on the embedded simulator — Llama-3.1-8B on 1×H100-SXM,
the chat workload (data/workloads/chat.yaml) and its SLOs (TTFT p99 ≤ 350 ms, ITL p99 ≤ 50 ms), 24
trials, 2 at a time — then prints the recommended vLLM flags beside vLLM's defaults and writes the
HTML report (reports/demo/report.html, or --out DIR). --model, --gpu, --gpus and --workload try another
deployment the same way (e.g. --model gpt-oss-120b --gpus 8); --model also takes a directory holding
a config.json or a Hugging Face repo id, --gpu a datasheet YAML (as \`tune\`). Each run is a new study in
.lm-bench/demo.db, so later runs also learn from earlier ones.
`;
