import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { LmBenchError } from '../errors.js';

/**
 * The local Hugging Face cache, as `huggingface-cli download` (huggingface_hub) lays it out:
 * `<root>/models--ORG--NAME/refs/main` holds the revision, `snapshots/<revision>/config.json` is a link
 * into `blobs/<etag>`. The root is `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`.
 * Only `config.json` is read, and never more than MAX_CONFIG_BYTES of it.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** A config.json is a few KB; anything past this is not one (or not a model's). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export function hubCacheRoot(env: Env, home: string = homedir()): string {
  const cache = env['HF_HUB_CACHE'];
  if (cache !== undefined && cache !== '') return cache;
  const hfHome = env['HF_HOME'];
  if (hfHome !== undefined && hfHome !== '') return join(hfHome, 'hub');
  return join(home, '.cache', 'huggingface', 'hub');
}

/** `Qwen/Qwen2.5-32B-Instruct` → `models--Qwen--Qwen2.5-32B-Instruct`. */
export function repoFolder(repoId: string): string {
  return `models--${repoId.split('/').join('--')}`;
}

/** An ORG/NAME repo id as the hub spells them (letters, digits, `-_.`), not a path. */
export function isRepoId(name: string): boolean {
  return /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/.test(name) && !name.includes('..');
}

/**
 * Reads a config.json file whole, bounded: through its links (a broken or looping link is an error
 * naming the path), refused past MAX_CONFIG_BYTES before a byte of it is parsed.
 */
export function readConfigFile(path: string): { text: string; realPath: string } {
  let realPath: string;
  try {
    realPath = realpathSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ELOOP' ? 'its links loop' : code === 'ENOENT' ? 'it is a broken link or does not exist' : `it cannot be read (${code ?? String(err)})`;
    throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${path}: ${why}`, { details: { field: 'model', value: path } });
  }
  let fd: number;
  try {
    fd = openSync(realPath, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${path}: it cannot be read (${code ?? String(err)})`, { details: { field: 'model', value: path } });
  }
  try {
    const stat = fstatSync(fd);
    // A directory opens, then fails the read with EISDIR: say so, naming the path, not as an internal error.
    if (!stat.isFile()) throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${path}: not a file (a config.json is a JSON file)`, { details: { field: 'model', value: path } });
    const size = stat.size;
    if (size > MAX_CONFIG_BYTES) {
      throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${path}: ${(size / 1024 / 1024).toFixed(1)} MB is not a config.json (at most ${MAX_CONFIG_BYTES / 1024} KB)`, { details: { field: 'model', value: path } });
    }
    const buf = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, buf, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return { text: buf.subarray(0, at).toString('utf8'), realPath };
  } finally {
    closeSync(fd);
  }
}

/** The cached config.json of a repo at the revision `refs/main` names, or null when the repo is not cached. */
export function findCachedConfig(root: string, repoId: string): { path: string; revision: string } | null {
  const folder = join(root, repoFolder(repoId));
  let revision: string;
  try {
    revision = readFileSync(join(folder, 'refs', 'main'), 'utf8').trim();
  } catch {
    return null;
  }
  if (!/^[\w.-]{1,128}$/.test(revision) || /^\.+$/.test(revision)) {
    throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${join(folder, 'refs', 'main')}: not a revision (${JSON.stringify(revision.slice(0, 40))})`, { details: { field: 'model', value: repoId } });
  }
  return { path: join(folder, 'snapshots', revision, 'config.json'), revision };
}

/**
 * Stores a config.json fetched from the hub where huggingface_hub would: the bytes as `blobs/<etag>`,
 * `snapshots/<commit>/config.json` a relative link to it, `refs/main` the commit. Written through a
 * temporary name and renamed, so a reader never sees half a file.
 */
export function writeCachedConfig(root: string, repoId: string, o: { commit: string; etag: string; bytes: Buffer }): string {
  const folder = join(root, repoFolder(repoId));
  const blob = join(folder, 'blobs', o.etag);
  const snapshot = join(folder, 'snapshots', o.commit, 'config.json');
  mkdirSync(dirname(blob), { recursive: true });
  mkdirSync(dirname(snapshot), { recursive: true });
  mkdirSync(join(folder, 'refs'), { recursive: true });
  const tmp = `${blob}.${process.pid}.tmp`;
  writeFileSync(tmp, o.bytes);
  renameSync(tmp, blob);
  try {
    symlinkSync(relative(dirname(snapshot), blob), snapshot);
  } catch (err) {
    // Already there (another process fetched it): the blob it points to is the same bytes.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const ref = join(folder, 'refs', `main.${process.pid}.tmp`);
  writeFileSync(ref, o.commit);
  renameSync(ref, join(folder, 'refs', 'main'));
  return snapshot;
}
