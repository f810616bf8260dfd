/** `lm-bench tune --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench tune --study NAME [--space search-spaces/vllm.yaml] --gpu GPU --gpus N --model MODEL
                (--workload FILE | --trace FILE [--trace-speed K] [--trace-limit N])
                [--slo ttft_p99_ms=350,itl_p99_ms=50]
                [--target sim|vllm|endpoint|command|slurm] [--profile auto|default|stored] [--vllm-version V]
                [--command "…" [--command-timeout-s 3600]]
                [--slurm-config FILE]
                [--endpoint URL [--api-key-env OPENAI_API_KEY] [--ca-cert FILE] [--insecure]]
                [--vllm-bin vllm] [--vllm-port 18000]
                --budget-trials N [--budget-hours H] [--parallel K] [--seed S]
                [--objective goodput|tokens_per_joule|usd_per_mtok|max-rate] [--sampler surrogate|random]
                [--keep-precision]
                [--enqueue knob=value,knob=value …] [--offline] [--db PATH]
                [--report-dir DIR | --no-report] [--json]
  lm-bench tune --study NAME [--db PATH] [--json]     resume a study with its stored settings

MODEL is a catalog id, a directory holding the model's config.json (or the file), or a Hugging Face
repo id (ORG/NAME) read from the local cache or, unless --offline or HF_HUB_OFFLINE=1, the hub; the
study stores the spec derived from it, with the config's hash, and keeps it when resumed. GPU is a
catalog GPU (or the name nvidia-smi prints) or a YAML file of the GPU's datasheet figures; the study
keeps the datasheet (resumed, reported, or named by its id in later commands after the file is gone).

Runs a tuning study: vLLM's defaults first, then the best matches from the history and the simulator's
best configurations for the deployment (defaults included, at most a quarter of the budget), then
model-guided rounds of propose → measure in parallel → record (the simulator corrected by what was
measured, then the XGBoost surrogate from 8 runs on), until the budget is spent or the expected
hypervolume improvement stays flat. --objective says what the study is for, always under the SLOs:
goodput (the default; \`throughput\` is the same) picks the most output throughput per GPU;
tokens_per_joule the fewest joules per output token (all the deployment's GPUs, from the simulator's
power model or the power a real run measured; the sampler trades J/token against p99 TTFT, since a
bigger batch saves joules at a latency cost); usd_per_mtok the fewest dollars per million output
tokens, which on one GPU type (a fixed price per GPU-hour, data/prices.yaml) ranks exactly as goodput
per GPU does, so it searches as goodput and states the cost beside the pick. Each failure is classified from what the target said and, where it
names a cause, becomes a rule on the knobs for the rest of the study and later studies of the deployment. With --objective max-rate (goodput, measured
another way) each trial finds the highest request rate that meets the SLOs by bisection (at most 5 load
runs per configuration). A resumed study keeps its objective. Every trial is recorded in the SQLite store as it
finishes; running the same command again resumes the study (completed trials are kept, trials a crash
left running are re-queued). --budget-hours H is the study's running time: a resume goes on with what
its earlier runs left of it. Progress goes to stderr; the recommendation to stdout (JSON with --json);
the HTML report to reports/<study>/report.html (or --report-dir). When no trial met the SLOs, the
summary names the one that came nearest (the worst SLO's measured figure against its limit, and the
SLO it would meet; \`nearest_miss\` in JSON), its \`vllm serve\` line marked as not meeting them.
--trace FILE tunes for exactly the traffic of a request trace (the formats of \`run --trace\`): every
trial replays its requests, lengths, shared prefixes and times (÷ K with --trace-speed K; the first N with
--trace-limit N). The study stores the requests in its spec, so a resumed study, a Slurm job and the
report see the same ones after the file is gone; its distributions (as \`workload from-trace\` fits
them) are what the surrogate's features read. Not with --objective max-rate, which searches the rate.
--enqueue (repeatable) queues a configuration to run right after vLLM's defaults, before anything the
tuner proposes (once per study, however often the command is repeated); --keep-precision holds
quantization and kv_cache_dtype at the checkpoint's own numerics. The study's surrogate is saved as
it refits and, cross-validated, when the study ends: \`lm-bench recommend\` answers from it.
--target vllm starts \`vllm serve\` on this machine for each trial (--vllm-bin: a path, or a name looked up
on PATH; default vllm); one that is missing or not executable is refused before any trial, naming it
and the PATH searched, and the study is not stored.
--target command runs your harness once per trial (docs/targets.md); --command-timeout-s (default 3600)
is how long a trial's command may run before it is killed and the trial fails as timed out.
--target slurm runs each trial as a batch job on a Slurm cluster (--slurm-config names the partition,
time limit, work dir and how vLLM starts; docs/slurm.md): jobs queue, run and are collected by id, a
killed \`tune\` run again reattaches to them, and Ctrl-C cancels them (scancel).
--profile (sim target) picks the simulator's efficiencies: the GPU's calibrated profile when
\`lm-bench sim calibrate\` stored one (auto), the catalog's (default), or the stored one or an error;
the study keeps the profile it started with. --vllm-version V (sim target) names the vLLM release the
simulator imitates (default: a current one; see \`sim run --vllm-version\`); the study keeps it, and its
prior and report price the same release.
`;
