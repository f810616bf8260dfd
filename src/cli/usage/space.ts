/** `lm-bench space --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage: lm-bench space [--space FILE…] --gpu GPU --gpus N --model MODEL --workload FILE [--offline] [--json]

Loads the search space (files merged in order; default search-spaces/vllm.yaml), binds it to the
hardware, model and workload, and reports how many configurations each constraint rule removes
(first-match attribution in rule order) and how many remain.

  --space FILE     search-space file; repeat to layer your own rules and knobs on top
  --gpu GPU        GPU from data/hardware.yaml (H100-SXM, A100-80GB, L40S, …, or the name nvidia-smi
                   prints), or a YAML file of the GPU's datasheet figures
  --gpus N         GPUs available (tensor_parallel_size × data_parallel_size must fit)
  --model MODEL    model from data/models.yaml (llama-3.1-8b, …), a directory holding its config.json
                   (or the file), or a Hugging Face repo id (the local cache, else the hub)
  --offline        never ask the Hugging Face hub (as HF_HUB_OFFLINE=1)
  --workload FILE  workload YAML (data/workloads/chat.yaml, …)
  --json           one JSON document on stdout
`;
