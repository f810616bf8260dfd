import { basename, dirname, isAbsolute } from 'node:path';
import type { ModelSpec } from './model-spec.js';

/**
 * Which model the printed `vllm serve` commands can name, for every command that prints one
 * (`recommend`'s answer, `tune`'s summary and explanation): one rule, here below both, because a
 * directory vLLM cannot serve printed by one of them is as wrong as by the other.
 */

/**
 * The file a model was derived from when it is a local JSON file other than a `config.json` (`--model
 * ./my-model.json`), else null. Its spec's `hf_name` is then the file's directory, which vLLM cannot
 * serve: `vllm serve DIR` reads DIR/config.json (absent, or another model's) and the weights beside it.
 * The resolver writes a local file's spec `source` as its absolute path (a cached hub file's with
 * " (revision R)" after it, always a config.json); a study keeps that spec (`StudySpec.model_spec`).
 */
export function unservableModelFile(model: Pick<ModelSpec, 'hf_name' | 'source'>): string | null {
  const file = model.source.replace(/ \(revision [^)]*\)$/, '');
  if (!isAbsolute(file) || basename(file) === 'config.json' || dirname(file) !== model.hf_name) return null;
  return file;
}

/** What the printed `vllm serve` commands name when the model's own directory cannot be served: to be replaced, and failing loudly if it is not. */
export const CHECKPOINT_PLACEHOLDER = '<CHECKPOINT_DIR_OR_HF_ID>';

/**
 * The spec as the printed commands serve it: `hf_name` is what `vllm serve` and the config file's
 * `model:` are given. Unchanged unless the model came from a JSON file other than a config.json; then
 * CHECKPOINT_PLACEHOLDER, which `servedModelWarning` tells the user to replace.
 */
export function servableModel(model: ModelSpec): ModelSpec {
  return unservableModelFile(model) === null ? model : { ...model, hf_name: CHECKPOINT_PLACEHOLDER };
}

/** Why the commands name CHECKPOINT_PLACEHOLDER, or nothing when they name the model itself. */
export function servedModelWarning(model: Pick<ModelSpec, 'hf_name' | 'source'>): string[] {
  const file = unservableModelFile(model);
  if (file === null) return [];
  return [
    `the model was read from ${file}, not a checkpoint's config.json: vLLM serves a directory holding config.json and the weights, or a Hugging Face id, so the vllm commands here name ${CHECKPOINT_PLACEHOLDER}; put the checkpoint's directory or Hugging Face id in its place`,
  ];
}
