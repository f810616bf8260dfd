/** `lm-bench ingest --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage: lm-bench ingest PATH… [--server-config FILE] [--set knob=value…] [--gpu G --gpus N --model M] [--replace] [--offline] [--db PATH] [--json]

Stores existing benchmark results in the history database, one transaction per file (all of it or
none). Directories are walked (*.json, *.jsonl, *.yaml, *.yml, *.csv; companions, sidecars, tool
configs and a CSV/YAML beside the JSON of the same run are passed over, each with the reason).
Formats: vllm bench serve results (legacy, 2025, newest; JSON Lines from --append-result), vllm bench
sweep folders, vLLM nightly tables (2024) and performance-benchmark tables (2025), NVIDIA AIPerf
profile_export_aiperf.json (0.1 records to schema 1.5) and .csv, genai-perf
profile_export_genai_perf.json (flat and nested input_config) and .csv, GuideLLM reports (v0.3–v0.8;
JSON, YAML, CSV), SGLang bench_serving JSONL, inference-perf lifecycle reports (summary and stage,
JSON or YAML), llm-d Benchmark Reports v0.2 (YAML or JSON), ML.ENERGY v3 leaderboard records (with
power and J/token), lm-bench results. Every figure is the one the tool measured; what a file lacks
is stored as unavailable, never as 0. Runs already stored with the same figures and context are
skipped; figures already stored under another GPU, GPU count, model or server config (an unset knob
counts as vLLM's default) reject the file, naming the run, unless --replace gives the stored run this
ingest's context (its id and figures kept, the old context in its notes). A run is rejected when its
server config, GPU or model cannot be established, when its figures contradict the tool's own
definitions (vllm bench serve: request_throughput = completed / duration; a median beside a different
p50), or when a figure is one no run measures (negative, non-finite, a latency beyond a week); the
message names the fields.

The server config comes from the file itself (lm-bench, sweep, vLLM tables, llm-d reports, ML.ENERGY),
over --server-config/--set, over a sidecar <file>.config.yaml (or lm-bench.config.yaml in the folder);
GPU and model come from the flags, else the sidecar, else the file (a note says when --model replaces
the file's model).
Each file's report lists the runs stored (or already stored): id, completed, failed, duration,
mean TTFT and output throughput, "-" where the file has no such figure; --json gives the same under
files[].stored.

  --server-config FILE  YAML/JSON with knobs (and optionally gpu, gpus, model)
  --set knob=value      a knob of the server config; repeatable
  --gpu G               GPU from data/hardware.yaml (or the name nvidia-smi prints), or a datasheet YAML
  --gpus N              GPUs the server used (default tensor_parallel_size × data_parallel_size)
  --model M             model from data/models.yaml, a directory holding its config.json (or the
                        file), or a Hugging Face repo id (the local cache, else the hub)
  --replace             a run already stored under another context takes this one
  --offline             never ask the Hugging Face hub (as HF_HUB_OFFLINE=1)
  --db PATH             database (default $LMB_DB, else .lm-bench/lm-bench.db)
  --json                one JSON document on stdout

Exit status: 0 when nothing was rejected, 1 when a file was rejected.
`;
