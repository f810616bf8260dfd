const PREDICT_USAGE = `  lm-bench sim predict --rows FILE.csv [--profile auto|default|stored] [--db PATH] [--offline] [--json]
                   (aiconfigurator silicon or ML.ENERGY v3 rows, told apart by the header; each row's
                    model resolved as --model is: catalog, config.json path, Hugging Face cache, hub)`;
const CALIBRATE_USAGE = `  lm-bench sim calibrate --gpu GPU [--model MODEL] [--vllm-version V] [--offline] [--db PATH] [--threads N] [--json]`;

/** `lm-bench sim --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench sim run --gpu GPU --gpus N --model MODEL [--set knob=value …] [vLLM flags …]
                   (--input-len N --output-len N | --workload FILE | --trace FILE [--trace-speed K] [--trace-limit N])
                   [--concurrency N | --request-rate R [--burstiness B] | --rate-stages R:S,…] [--num-prompts N]
                   [--prompt-pool N] [--seed S] [--requests-out FILE.jsonl] [--records FILE.jsonl]
                   [--vllm-version V] [--profile auto|default|stored] [--offline] [--db PATH] [--json]
  lm-bench sim serve --gpu GPU --gpus N --model MODEL [--set knob=value …] [vLLM flags …]
                   [--port 8000] [--host 127.0.0.1] [--speed K] [--startup-scale F]
                   [--api-key KEY] [--ssl-certfile FILE --ssl-keyfile FILE]
                   [--vllm-version V] [--profile auto|default|stored] [--offline] [--db PATH]
${PREDICT_USAGE}
${CALIBRATE_USAGE}

Runs the simulated vLLM V1 engine: \`run\` benchmarks it in virtual time (like \`vllm bench serve\`
against \`vllm serve\`; --trace replays a request trace: Azure, Mooncake, BurstGPT, Splitwise or
{timestamp_s, input_tokens, output_tokens} JSONL, each request at its time ÷ K, shared blocks as shared prefixes), \`serve\` puts it behind an OpenAI-compatible HTTP server in real time
(K× faster with --speed K). --request-rate and --burstiness take "inf" as \`run\`'s do: R = inf sends every
request at once (a burst, capped by --concurrency), B = inf spaces arrivals evenly. --rate-stages 8:600,20:600 sends Poisson arrivals at 8 req/s for 600 s,
then 20 req/s for 600 s (a workload's \`arrival.stages\`; the stages bound the run, --num-prompts can only
lower it); --prompt-pool N re-sends N distinct prompts in a cycle (\`prompt_pool\`), so the prefix cache
serves the repeats. --requests-out writes one JSON line per request (arrival_s, ttft_ms, itl_ms, e2e_ms,
input/output tokens), --records the full per-request records (\`run --records\`'s format).
Knobs come from --set or from vLLM's own flags
(--max-num-seqs 256, --no-enable-chunked-prefill, --tensor-parallel-size 2, --enforce-eager, …);
--api-key and --ssl-certfile/--ssl-keyfile behave as vllm serve's (bearer token on /v1, https).
Flags of a pasted vllm serve line that change nothing simulated are accepted and named as ignored on
stderr: --trust-remote-code, --download-dir, --dtype auto|half|float16|bfloat16 (float32 is refused:
32-bit weights are not modelled), the logging flags (--disable-log-requests, --disable-log-stats,
--uvicorn-log-level, …); \`run\` answers no HTTP, so it also ignores --host, --port, --api-key and
--served-model-name. The text output ends with the run's diagnosis (why:, try:), as \`lm-bench run\`'s.
\`serve\` answers as vLLM's OpenAI server: /v1/completions and /v1/chat/completions (streamed or not; n, a batch of
prompts, max_tokens (16 for completions when unset), min_tokens, ignore_eos, stop, logprobs; vLLM's 400s),
/v1/models, /tokenize, /version, /health and /metrics; a client that hangs up frees its requests' KV blocks.
\`serve\` binds its port at once and answers from when its simulated start-up (weights, torch.compile,
CUDA graphs: tens of seconds) has passed, ÷ K, × F (--startup-scale 0 to answer at once); it can die
of a run-time CUDA OOM when gpu_memory_utilization leaves little headroom (exit 1, torch's message).
Steps are priced with the GPU's calibrated profile when \`sim calibrate\` stored one in --db
(default .lm-bench/lm-bench.db), else data/sim-profile.yaml (--profile default forces that) for the vLLM
release --vllm-version names (default: a current one): before 0.14 decode steps pay for their context as
the fitted vLLM 0.10–0.12 servers did, from 0.14 at the rate that release's attention kernels read the
KV cache (data/hardware.yaml \`sim_recent\`, a datasheet YAML's too; docs/calibration.md). A calibrated
profile describes the vLLM its runs were measured on (\`sim calibrate --vllm-version\`) and ignores
--vllm-version. Without one, \`sim predict\` prices each row for its own release (aiconfigurator's
backend_version, ML.ENERGY v3's 0.11.1).
Energy (a GPU power model fitted on ML.ENERGY's measured power, docs/calibration.md): \`run\` reports the
average power of all the GPUs, the energy, J/token and tokens/J over ML.ENERGY's steady-state window
(\`energy\` in --json); \`serve\` shows each GPU's power and energy on /metrics under dcgm-exporter's names
and prints what it drew from the first request to the last token when stopped.
A configuration that vLLM would refuse exits with status 3 and vLLM's reason.
--model takes a catalog id, a directory holding a config.json, or a Hugging Face repo id (the local
cache, else the hub unless --offline); --gpu a catalog GPU, nvidia-smi's name, or a datasheet YAML.`;
