import { RUN_FILTER_KEYS } from '../../export/run-filter-keys.js';

/** `lm-bench export --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench export (--study NAME | --runs FILTER) --format llm-d-br|vllm --out DIR [--force] [--db PATH] [--offline] [--json]

Writes what lm-bench measured in the formats other tools read, one file per trial or run:
  llm-d-br  an llm-d Benchmark Report v0.2 (YAML), valid against llm-d-benchmark's JSON Schema:
            DIR/benchmark_report_v0.2,_<study>-trial-<n>.yaml or …,_run-<id>.yaml
  vllm      the JSON \`vllm bench serve --save-result\` writes: DIR/<study>-trial-<n>.json or run-<id>.json,
            each with <file>.config.yaml (server config, GPU, model, workload: what \`lm-bench ingest\`
            reads back), and DIR/summary.json listing every record (what \`vllm bench sweep plot\` reads)

  --study NAME     a study's complete trials
  --runs FILTER    stored runs (ingested ones and trials alike): key=value pairs joined by commas, the
                   filters of GET /v1/runs — ${RUN_FILTER_KEYS.join(', ')} — e.g.
                   --runs gpu=H100-SXM,model=llama-3.1-8b,config.max_num_seqs=128; or --runs all
  --format F       llm-d-br or vllm
  --out DIR        output folder (created if missing; files of the same name are replaced). A folder
                   holding anything else (an earlier export of other runs, whose files summary.json
                   would not list) is refused, naming it, and nothing is written
  --force          write into such a folder anyway, beside what it holds, which is left as it is
                   (nothing is ever deleted; a reader of the folder then sees both)
  --db PATH        history database (default $LMB_DB, else .lm-bench/lm-bench.db); read, never written
  --offline        never ask the Hugging Face hub when resolving --runs model=… (as HF_HUB_OFFLINE=1)
  --json           {format, out, files: [{path, format, run_id | study, trial, sidecar}], summary,
                   skipped: [{trial, state, reason} | {run_id, source_format, reason}],
                   others: [the paths --force left beside the export]}

A figure lm-bench does not have (a run ingested from a file that lacked it, latencies of a run with no
completed request) is left out, never written as 0. A run whose source lacked what every vllm bench
serve result carries (duration, completed, token totals, request and output throughput: an ML.ENERGY
window, a vLLM nightly row) is skipped by --format vllm, with the reason; llm-d-br holds it. Everything is staged and renamed into DIR, so a
failure leaves DIR as it was.`;
