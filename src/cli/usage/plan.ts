/** The GPU types a plan compares when --gpu is not given. */
export const DEFAULT_GPUS = 'H100-SXM,A100-80GB,L40S,B200';

/** `lm-bench plan --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench plan --model MODEL --workload FILE (--rate R | --users N) [--slo ttft_p99_ms=1000,itl_p99_ms=80]
                [--gpu ${DEFAULT_GPUS}] [--max-gpus 64] [--objective usd_per_mtok|tokens_per_joule|gpus]
                [--vllm-version V] [--prices FILE] [--db PATH] [--offline] [--seed S] [--html FILE] [--json]

Which GPUs, how many, at what price: for each GPU type, the deployment (replicas × tensor-parallel
size, the \`vllm serve\` line) that serves the traffic — R requests a second (Poisson) or N users in a
closed loop, with the workload file's lengths — within the SLOs (default: the workload file's), with
its predicted p99 TTFT and ITL at that traffic, its headroom (the most it sustains within the SLOs),
$/h, $ per million output tokens, and output tok/s, power and joules per output token, all three over
one window of the simulated run (its steady state, so power = J/token × tok/s). Ranked by the objective
(default usd_per_mtok); a GPU type that cannot serve the traffic is listed with the reason. Figures are
the simulator's ("estimated"), corrected by your measured runs of this model on a GPU where the history
(--db, default $LMB_DB or .lm-bench/lm-bench.db, when it exists) has two or more ("measured").
Exit status 0 when some GPU type serves the traffic, 1 when none does: an answer, not an error (each ✗
line says why and "Nothing feasible" closes the list; --json has "feasible": false and each
deployment's reason, and stderr repeats the reasons).
Prices: data/prices.yaml, overridden by --prices FILE (same layout) or a GPU datasheet's usd_per_gpu_hour.
--vllm-version V: the vLLM release the deployments will run (default: a current one), which the simulator
imitates (before 0.14 decode steps pay for long contexts as the fitted vLLM 0.10–0.12 servers did).
--html FILE writes the plan as an HTML page (table, cost and energy plots, the pick marked).`;
