/** `lm-bench run --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `lm-bench run: load an OpenAI-compatible server and report vLLM-compatible metrics

Usage: lm-bench run --endpoint URL [--config FILE] [flags]
       lm-bench run --host H --port P [--endpoint PATH] [flags]     (as vllm bench serve)

  --endpoint URL         any http(s) server, e.g. http://gpu-box:8000/v1/completions (or …/v1/chat/completions);
                         may also come from the config file's \`endpoint\`
  --base-url URL         or vllm bench serve's flags: the server's root (a gateway's prefix kept, e.g.
  --host H  --port P     http://gw/llama), or its host (default 127.0.0.1) and port (default 8000), with
                         --endpoint the path under it (default /v1/completions). They replace the config
                         file's endpoint; --base-url with --host or --port, or a whole --endpoint URL with
                         any of them, is refused (vLLM lets --base-url win silently)
  --api-key KEY          sent as a bearer token (vllm serve --api-key); default: $OPENAI_API_KEY. Never printed or stored
  --ca-cert FILE         trust this CA (PEM) for https, e.g. a self-signed server's certificate
  --insecure             https without certificate verification
  --connect-timeout-s S  give up connecting after S seconds (default 10)
  --dry-run              print where the load would go and how it is bounded; send nothing
  --config FILE          YAML config (see configs/llama3-8b-throughput.yaml); a sweep runs every combination
  --workload FILE        or a workload file (data/workloads/*.yaml): the traffic a study's trials send
  --trace FILE           or replay a request trace: Azure LLM inference CSV, Mooncake/FAST'25 JSONL
                         (shared hash_ids become shared prompt prefixes), BurstGPT CSV, Splitwise CSV,
                         or JSONL of {timestamp_s, input_tokens, output_tokens}: each request sent at its
                         time ÷ K (--trace-speed K, default 1) with a prompt of its input tokens and
                         max_tokens = its output tokens; --trace-limit N replays the first N. The result
                         says how late the sends were against the trace's schedule (trace_replay)
  --output FILE          result JSON (one object; a sweep writes one object per line, like --append-result;
                         a run stopped part-way, by Ctrl-C in any mode or its server gone in a sweep, a
                         max-rate search or slo-hold, writes what it measured, marked stopped with the cause;
                         the requests Ctrl-C cut short are on --records as aborted, out of the result)
  --html FILE            self-contained HTML summary (tables and plots, no network)
  --records FILE         per-request records as JSON Lines
  --requests-out FILE    one JSON line per request: arrival_s, ttft_ms, itl_ms, e2e_ms, input/output tokens
                         (as \`sim run --requests-out\`), to pool percentiles across stages or runs.
                         With --mode slo-hold both files hold every request it sent (those whose send_s
                         lies in the JSON's window_s are the settled window's); with --mode max-rate every
                         probe's, each id naming its probe (probe3-r17: request r17 of probes[2]), its
                         times from that probe's start
  --json                 print the result(s) as one JSON document on stdout
  --mode fixed|slo-hold|max-rate
                         fixed (default): the load as given. slo-hold: a feedback controller finds the
                         highest rate that holds one latency percentile (--slo ttft_p95_ms=400; with several
                         SLO keys, --control names the held one), within --duration-s (default 120);
                         --window-s (10) and --start-rps (2) tune it. max-rate: the tuner's bisection on
                         the Poisson rate (5 load runs of the workload). Both say when the answer is
                         unreliable (never settled, server errors, the client was the bottleneck);
                         slo-hold stops early once 20 requests in a row find no server (refused)
Over the file, or without one:
  --model M  --api completions|chat  --input-len N  --output-len N  --num-prompts N
  --prompt-pool N        re-send N distinct prompts in a cycle (a server's prefix cache sees the repeats)
  --concurrency C        closed loop with C in flight (with --request-rate: a cap)
  --request-rate R       open loop, R req/s or "inf";  --burstiness B (1 = Poisson, "inf" = even)
  --rate-stages R:S,…    open loop, Poisson at R req/s for S seconds, stage after stage (8:600,20:600);
                         the stages bound the run (num_prompts defaults to the requests they hold)
  --max-concurrency C    cap for the open loop;  --duration-s S  stop sending after S seconds
  --warmup N  --seed S  --slo ttft_p99_ms=…,itl_p99_ms=…  --timeout-s S  --workers N  --label L
  --prompt-salt S        the words of the synthetic prompts (not their lengths, arrivals or sharing); default:
                         fresh each run, so a server's prefix cache holds nothing from an earlier run of the
                         same seed. Recorded as the result's lmb.prompt_salt: pass it back with the same seed
                         to send the same words again (a sweep's point i records S.i: pass S for the sweep).
                         Prompts read from a file are sent as written
  --set knob=value       the server's knobs, when known (repeatable: --set max_num_seqs=256): recorded as
                         the result's server_config and read by the diagnosis
Power (the result's \`energy\`: average W, J, J per output token over the load window):
  --power-metrics URL    a DCGM exporter's /metrics on the server's node, e.g. http://gpu-box:9400/metrics
                         (repeatable, one per node); its energy counter, else its power gauge integrated
  --power-smi nvidia|amd sample nvidia-smi (every 200 ms) or amd-smi (every 1 s) on this machine, when the
                         server runs here
  --power-gpus LIST      the GPUs that count, e.g. 0,1 (default: every GPU the source reports)
                         A source that fails or hangs leaves the run measured and power unavailable, with why

Before any load, one 1-token probe request: a server that answers it 429 or 503 (shedding load, or
not ready) is asked again when its Retry-After says, within 30 s in all; still shedding, or naming no
wait or a longer one, the run is refused with the status, and nothing is sent.

Answers whose stream carried no usage (a server that ignores stream_options.include_usage) are
estimated, and warned about: max_tokens for an answer that finished for length (a server refuses a
request past its context rather than stop it short), one token a content chunk for the others, which
undercounts those on a server that streams several tokens a chunk (each record's \`token_source\`
says which: \`max_tokens\` or \`fallback\`; \`lmb.token_source_counts\` in the JSON counts them).

Answers that end before their max_tokens although ignore_eos was sent (a server that does not honour
it, or caps max_tokens), or run past it, are counted in the JSON's \`output_lengths\` and warned about:
the figures are then for other output lengths than the workload's, and --mode slo-hold or max-rate
gives no answer.

A run that misses its SLOs or saturates says why (KV-cache-, admission-, prefill-, decode- or
client-bound), with the numbers seen during the run (the server's /metrics, the client's own health)
and the knob changes that address it: on the terminal, in the JSON (\`diagnosis\`, \`evidence\`) and
in the HTML summary. An open-loop run (\`--request-rate\`, a workload's Poisson, gamma or constant
arrivals, a trace) whose queue grew for as long as requests arrived is marked SATURATED, with the rate
the server sustained (\`saturation\` in the JSON): its latency figures measure the run's length.
`;
