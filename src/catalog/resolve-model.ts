import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { ModelSpec } from '../domain/index.js';
import { isLmBenchError, LmBenchError } from '../errors.js';
import { findCachedConfig, hubCacheRoot, isRepoId, readConfigFile, writeCachedConfig, type Env } from './hf-cache.js';
import { modelSpecFromHfConfig, normalisedConfigHash } from './hf-config.js';
import { isObject, type Json } from './hf-fields.js';
import { fetchHubConfig, hubEndpoint, HubNotFound } from './hf-hub.js';
import { findRegisteredModel, type Catalog } from './index.js';

/**
 * `--model NAME` (and every `model` field) to a ModelSpec, in this order (issue 24):
 *
 * 1. a catalog id or alias, or a catalog model's Hugging Face id (case-insensitive);
 * 2. a path: a directory holding `config.json`, or a `config.json` file (as `vllm serve PATH` takes);
 * 3. an ORG/NAME repo in the local Hugging Face cache (hf-cache.ts), at the revision `refs/main` names;
 * 4. the hub (`$HF_ENDPOINT`, `HF_TOKEN`), `config.json` only, stored in the cache where
 *    huggingface_hub would; never when `HF_HUB_OFFLINE=1` or `offline`.
 *
 * A spec the history stored (registered when the store was opened) answers a `ID@HASH8` id (the
 * second checkpoint of a name, store.ts `adoptModelSpec`) at once, and any other name only when none of
 * the above knows it (a cache emptied since): a file, when there is one, always wins, so a changed
 * checkpoint is read as it is now. A name none of them knows fails with what was tried, in order, and how to point at a config.json.
 */
export interface ResolvedModel {
  readonly spec: ModelSpec;
  readonly origin: 'catalog' | 'path' | 'hf-cache' | 'hub' | 'store';
  /** normalisedConfigHash of the config.json the spec was derived from; null for a catalog model. */
  readonly config_hash: string | null;
  /** The catalog id, the file read, or the URL fetched. */
  readonly location: string;
}

export interface ResolveOptions {
  readonly catalog: Catalog;
  readonly env: Env;
  readonly home?: string | undefined;
  readonly cwd?: string | undefined;
  /** `--offline`: the hub is never asked (as HF_HUB_OFFLINE=1). */
  readonly offline?: boolean | undefined;
  readonly timeoutMs?: number | undefined;
  /**
   * Where a path may point (the service's `model_dirs`): only an absolute path inside one of them,
   * links followed, is read, and a name that is not one is never tried as a path. Undefined: any
   * path (the CLI, whose user owns the files it reads).
   */
  readonly pathRoots?: readonly string[] | undefined;
  /** How messages name the option the model came from: `--model` (the CLI) or a request's `model`. */
  readonly option?: string | undefined;
}

export async function resolveModel(name: string, o: ResolveOptions): Promise<ResolvedModel> {
  try {
    return await resolveFiles(name, o);
  } catch (err) {
    // A name no file answers may still be a spec the history stored (its cache emptied since).
    if (isLmBenchError(err, 'LMB_ERR_UNKNOWN_MODEL')) {
      const stored = fromStore(name);
      if (stored !== null) return stored;
    }
    throw err;
  }
}

async function resolveFiles(name: string, o: ResolveOptions): Promise<ResolvedModel> {
  const tried: string[] = [];
  const known = o.catalog.findOwn(name);
  if (known !== null) return { spec: known, origin: 'catalog', config_hash: null, location: `catalog: ${known.id}` };
  tried.push('the catalog (data/models.yaml ids, aliases and Hugging Face ids)');
  if (name.includes('@')) {
    const stored = fromStore(name);
    if (stored !== null) return stored;
  }

  const option = o.option ?? '--model';
  const path = o.pathRoots === undefined ? resolve(o.cwd ?? process.cwd(), name.startsWith('~/') ? join(o.home ?? homedir(), name.slice(2)) : name) : pathWithin(name, o.pathRoots);
  if (path !== null && existsSync(path)) {
    const file = statSync(path).isDirectory() ? join(path, 'config.json') : path;
    if (!existsSync(file)) throw new LmBenchError('LMB_ERR_UNKNOWN_MODEL', `${path} is a directory without a config.json; ${option} takes a directory holding the model's config.json, or the file itself`, { details: { field: 'model', value: name } });
    if (o.pathRoots !== undefined) pathWithin(realpathSync(file), o.pathRoots.map((r) => (existsSync(r) ? realpathSync(r) : r)), name);
    const dir = file === path ? dirname(path) : path;
    return distinctFromCatalog(fromFile(file, { id: pathId(dir), hfName: dir, origin: 'path' }), o.catalog);
  }
  if (path !== null) tried.push(`a path (${path} does not exist)`);

  const home = o.home ?? homedir();
  if (!isRepoId(name)) throw unknown(name, tried, option);
  const root = hubCacheRoot(o.env, home);
  const cached = findCachedConfig(root, name);
  const meta = { id: name.toLowerCase(), hfName: name };
  if (cached !== null && existsSync(cached.path)) return fromFile(cached.path, { ...meta, origin: 'hf-cache', revision: cached.revision });
  if (cached !== null && !existsSync(cached.path)) {
    // A link to a blob that is gone, or to itself: say which, rather than fetching over it.
    readConfigFile(cached.path);
  }
  tried.push(`the Hugging Face cache (${join(root, `models--${name.split('/').join('--')}`)}: not there)`);

  const offline = o.offline === true || ['1', 'true', 'yes'].includes((o.env['HF_HUB_OFFLINE'] ?? '').toLowerCase());
  if (offline) {
    tried.push(`the hub (not asked: ${o.offline === true ? '--offline' : 'HF_HUB_OFFLINE=1'})`);
    throw unknown(name, tried, option);
  }
  let fetched: Awaited<ReturnType<typeof fetchHubConfig>>;
  try {
    fetched = await fetchHubConfig(name, { env: o.env, timeoutMs: o.timeoutMs });
  } catch (err) {
    if (!(err instanceof HubNotFound)) throw err;
    tried.push(`the hub (${hubEndpoint(o.env)}: ${err.message})`);
    throw unknown(name, tried, option);
  }
  const { spec, hash } = derive(fetched.bytes.toString('utf8'), fetched.url, { ...meta, source: `${fetched.url} (commit ${fetched.commit})` });
  // Cached as the hub client would, so the next resolution (and vLLM itself) finds it offline. A cache
  // we cannot write (read-only) costs the next run a fetch, not this one its answer.
  let location = fetched.url;
  try {
    location = writeCachedConfig(root, name, { commit: fetched.commit, etag: fetched.etag ?? hash, bytes: fetched.bytes });
  } catch {
    // left uncached
  }
  return { spec, origin: 'hub', config_hash: hash, location };
}

/**
 * A path's id: its directory's name, or for a Hugging Face cache snapshot
 * (`…/models--ORG--NAME/snapshots/REV`, as `vllm serve` is often given one) the repo's `org/name`, the id
 * `--model ORG/NAME` gives the same checkpoint, not the revision's hash.
 */
function pathId(dir: string): string {
  const snapshot = /(?:^|\/)models--([^/]+?)--([^/]+)\/snapshots\/[^/]+$/.exec(dir);
  return (snapshot === null ? basename(dir) : `${snapshot[1]}/${snapshot[2]}`).toLowerCase();
}

/**
 * A path's id is its directory's name, which may name a catalog model (a local `Llama-3.1-8B-Instruct/`
 * holding a quantized, fine-tuned or other checkpoint): every later lookup by id (a study's trials, the
 * served model's name) would then find the catalog's row, not this config.json. It takes the hash
 * suffix a second checkpoint of one name gets instead (store.ts `adoptModelSpec`, HASH_SUFFIX_CHARS hex digits).
 */
function distinctFromCatalog(r: ResolvedModel, catalog: Catalog): ResolvedModel {
  if (r.config_hash === null || catalog.findOwn(r.spec.id) === null) return r;
  return { ...r, spec: { ...r.spec, id: `${r.spec.id}@${r.config_hash.slice(0, 8)}` } };
}

function fromStore(name: string): ResolvedModel | null {
  const hit = findRegisteredModel(name);
  return hit === null ? null : { spec: hit.spec, origin: 'store', config_hash: hit.configHash, location: `the history's stored spec ${hit.spec.id}` };
}

function fromFile(file: string, m: { id: string; hfName: string; origin: 'path' | 'hf-cache'; revision?: string }): ResolvedModel {
  const { text, realPath } = readConfigFile(file);
  const source = m.revision === undefined ? file : `${file} (revision ${m.revision})`;
  const quantFile = join(dirname(file), HF_QUANT_CONFIG);
  const quant = existsSync(quantFile) ? { text: readConfigFile(quantFile).text, where: quantFile } : null;
  const { spec, hash } = derive(text, file, { id: m.id, hfName: m.hfName, source }, quant);
  return { spec, origin: m.origin, config_hash: hash, location: realPath === file ? file : `${file} → ${realPath}` };
}

/**
 * ModelOpt up to 0.29 wrote its quantization beside config.json, in `hf_quant_config.json`, not inside
 * it (nvidia/Llama-3.1-8B-Instruct-FP8 and its kin). vLLM's `get_config` reads that file as the
 * `quantization_config` when config.json has none, and so does the resolver: otherwise such a
 * checkpoint would be priced as bf16, twice its real weight bytes.
 */
const HF_QUANT_CONFIG = 'hf_quant_config.json';

/** Whether config.json states its quantization itself (at the top, or in a multimodal wrapper's text_config). */
const hasQuantization = (config: Json): boolean => 'quantization_config' in config || (isObject(config['text_config']) && 'quantization_config' in config['text_config']);

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${where}: not JSON (${(err as Error).message})`, { details: { field: 'model', value: where } });
  }
}

function derive(text: string, where: string, meta: { id: string; hfName: string; source: string }, quant: { text: string; where: string } | null = null): { spec: ModelSpec; hash: string } {
  const parsed = parseJson(text, where);
  const json = quant !== null && isObject(parsed) && !hasQuantization(parsed) ? { ...parsed, quantization_config: parseJson(quant.text, quant.where) } : parsed;
  try {
    return { spec: modelSpecFromHfConfig(json, meta), hash: normalisedConfigHash(json) };
  } catch (err) {
    if (err instanceof LmBenchError) throw new LmBenchError(err.code, `${where}: ${err.message}`, { details: err.details, cause: err });
    throw err;
  }
}

/**
 * A path name may be read as, under `roots` (absolute paths inside one of them): null for a name that
 * is no path (ORG/NAME, a bare name: the cache and the hub). Any other path is refused with the same
 * words whether or not it exists, so a request cannot learn what is on the service's disk.
 */
function pathWithin(name: string, roots: readonly string[], asked = name): string | null {
  const looksLikePath = isAbsolute(name) || name.startsWith('.') || name.startsWith('~') || name.includes('\\');
  if (!looksLikePath) return null;
  const path = resolve(name);
  const inside = (root: string): boolean => {
    const rel = relative(resolve(root), path);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  if (isAbsolute(name) && roots.some(inside)) return path;
  const where = roots.length === 0 ? 'none are configured' : `configured: ${roots.join(', ')}`;
  throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `model "${asked}": this service reads a config.json only by an absolute path inside its model_dirs (${where}); name a catalog model or an ORG/NAME Hugging Face repo id`, {
    details: { field: 'model' },
  });
}

function unknown(name: string, tried: readonly string[], option = '--model'): LmBenchError {
  return new LmBenchError(
    'LMB_ERR_UNKNOWN_MODEL',
    `unknown model "${name}": tried ${tried.map((t, i) => `${i + 1}. ${t}`).join('; ')}. Point ${option} at a directory holding the model's config.json (or the file), or at an ORG/NAME Hugging Face repo id (downloaded with \`huggingface-cli download ORG/NAME config.json\`, or fetched from the hub when online)`,
    { details: { field: 'model', value: name } },
  );
}
