/** `lm-bench recommend --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench recommend --gpu GPU --gpus N --model MODEL --workload FILE [--slo ttft_p99_ms=350,itl_p99_ms=50]
                     [--objective goodput|tokens_per_joule|usd_per_mtok]
                     [--keep-precision] [--vllm-version V] [--offline] [--db PATH] [--space FILE] [--candidates N] [--seed S] [--json]

MODEL is a catalog id, a directory holding the model's config.json (or the file), or a Hugging Face
repo id (ORG/NAME) read from the local cache or, unless --offline or HF_HUB_OFFLINE=1, the hub. GPU is
a catalog GPU (or the name nvidia-smi prints), a YAML file of the GPU's datasheet figures, or the id of
a datasheet a study in the history began with.

The best configuration the surrogate predicts for this deployment under the SLOs (default: the
workload file's slo), picked by a stated rule (the highest lower bound of throughput per GPU among
configurations likely to start and meet the SLOs), with ±2σ intervals, the Pareto set it came from,
the best configuration that keeps the checkpoint's numerics (no fp8 weights or KV cache) beside it,
the \`vllm serve\` command line and a \`vllm serve --config\` YAML. The surrogate is the newest one
covering this GPU and model: saved by a study (\`lm-bench tune\`) or by \`lm-bench surrogate train\`.
With none (an empty database, or no runs of this GPU and model), the simulator answers in seconds:
labelled as simulated, with intervals from its measured error, and the 2-3 runs that would most
change the answer.
Says when the history is too thin to trust, or when the simulator expects the pick not to start, to
crash, or to risk a run-time CUDA OOM (1% or more in 1,000 requests), and which runs to do next (the
pick first, then), as commands to paste.
--objective says what the pick is for, always under the SLOs: goodput (the default: the rule above);
tokens_per_joule, the lowest upper bound (mean + 2σ) of predicted joules per output token of all the
deployment's GPUs (the simulator's power model, corrected by the power measured runs carried);
usd_per_mtok, the fewest dollars per million output tokens, which on one GPU type (a fixed price per
GPU-hour) is the goodput rule, with the cost stated beside the pick. The answer states its rule.
--keep-precision pins quantization and kv_cache_dtype to the checkpoint's own.
--vllm-version V: the vLLM release you serve (default: a current one), which the simulator imitates where
it answers or diagnoses (before 0.14 decode steps pay for long contexts as vLLM 0.10–0.12 did).`;
