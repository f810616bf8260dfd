/** `lm-bench models --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench models show MODEL [--offline] [--db PATH] [--json]

Resolves MODEL as every --model does — a catalog id or alias, a directory holding the model's
config.json (or the file), an ORG/NAME Hugging Face repo in the local cache or, unless --offline or
HF_HUB_OFFLINE=1, on the hub — and prints the spec lm-bench derived: where it came from (origin, file or
URL, the hash of its normalised config.json), total and active parameters, KV-cache bytes per token,
and the weights each GPU holds at tensor parallelism 1, 2, 4 and 8 in the checkpoint's own format.
With a history (--db, default $LMB_DB or .lm-bench/lm-bench.db, when the file exists) it also says the
id the model's runs and studies have there (a second checkpoint of one name is ID@HASH8). Reads only.
`;
