import { request } from 'undici';
import { LmBenchError } from '../errors.js';
import { isLoopbackHost } from '../util/loopback.js';
import { MAX_CONFIG_BYTES, type Env } from './hf-cache.js';

/**
 * One `config.json` from the Hugging Face hub: `GET {HF_ENDPOINT}/{repo}/resolve/{revision}/config.json`
 * (the route huggingface_hub downloads through), with `HF_TOKEN` as a bearer token for gated repos,
 * bounded in time and size. Never called when `HF_HUB_OFFLINE=1` or `--offline` (resolve-model.ts).
 * Under LMB_LOOPBACK_ONLY=1 (the test runner) a hub off this machine is refused before any connection.
 */
export const DEFAULT_HUB = 'https://huggingface.co';

export interface HubConfig {
  readonly bytes: Buffer;
  /** The commit the revision resolved to (`X-Repo-Commit`), else the revision asked for. */
  readonly commit: string;
  /** The blob's name in the cache (`X-Linked-Etag` or `ETag`, unquoted), else a hash of the bytes. */
  readonly etag: string | null;
  readonly url: string;
}

const MAX_REDIRECTS = 3;

export function hubEndpoint(env: Env): string {
  const e = env['HF_ENDPOINT'];
  return (e === undefined || e === '' ? DEFAULT_HUB : e).replace(/\/+$/, '');
}

export async function fetchHubConfig(repoId: string, o: { env: Env; revision?: string | undefined; timeoutMs?: number | undefined }): Promise<HubConfig> {
  const base = hubEndpoint(o.env);
  const revision = o.revision ?? 'main';
  const timeoutMs = o.timeoutMs ?? 10_000;
  let url = `${base}/${repoId}/resolve/${encodeURIComponent(revision)}/config.json`;
  const token = o.env['HF_TOKEN'];
  const signal = AbortSignal.timeout(timeoutMs);
  for (let hop = 0; ; hop++) {
    const u = new URL(url);
    // The process's own flag counts too: a test that hands the resolver an environment of its own
    // (an empty one, say) still never reaches past this machine.
    if ((o.env['LMB_LOOPBACK_ONLY'] === '1' || process.env['LMB_LOOPBACK_ONLY'] === '1') && !isLoopbackHost(u.hostname)) {
      throw new LmBenchError('LMB_ERR_HUB_UNAVAILABLE', `${u.origin} is not on this machine and LMB_LOOPBACK_ONLY=1: the hub is not asked`, { details: { field: 'model', value: repoId } });
    }
    let res: Awaited<ReturnType<typeof request>>;
    try {
      // The token goes only to the hub itself, not to a host a redirect names.
      const sameHost = u.origin === new URL(base).origin;
      res = await request(url, {
        method: 'GET',
        headers: { 'user-agent': 'lm-bench', ...(token !== undefined && token !== '' && sameHost ? { authorization: `Bearer ${token}` } : {}) },
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      const why = signal.aborted ? `no answer within ${timeoutMs / 1000} s` : (err as Error).message;
      throw new LmBenchError('LMB_ERR_HUB_UNAVAILABLE', `${url}: ${why}`, { details: { field: 'model', value: repoId }, cause: err });
    }
    const status = res.statusCode;
    if (status >= 300 && status < 400 && typeof res.headers['location'] === 'string' && hop < MAX_REDIRECTS) {
      await res.body.dump();
      url = new URL(res.headers['location'], url).href;
      continue;
    }
    if (status !== 200) {
      await res.body.dump().catch(() => undefined);
      if (status === 401 || status === 403) {
        throw new LmBenchError('LMB_ERR_HUB_UNAUTHORIZED', `${url}: HTTP ${status}: ${repoId} is gated or private; accept its licence on the hub and set HF_TOKEN, or point --model at its config.json`, { details: { field: 'model', value: repoId } });
      }
      if (status === 404) throw new HubNotFound(`${url}: HTTP 404`);
      throw new LmBenchError('LMB_ERR_HUB_UNAVAILABLE', `${url}: HTTP ${status}`, { details: { field: 'model', value: repoId } });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_CONFIG_BYTES) {
          res.body.destroy();
          throw new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `${url}: larger than ${MAX_CONFIG_BYTES / 1024} KB, not a config.json`, { details: { field: 'model', value: repoId } });
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof LmBenchError) throw err;
      throw new LmBenchError('LMB_ERR_HUB_UNAVAILABLE', `${url}: ${signal.aborted ? `the body did not arrive within ${timeoutMs / 1000} s` : (err as Error).message}`, { details: { field: 'model', value: repoId }, cause: err });
    }
    const header = (name: string): string | null => {
      const v = res.headers[name];
      return typeof v === 'string' && v !== '' ? v : null;
    };
    // Both name a file in the cache (snapshots/<commit>, blobs/<etag>): a `.` or `..` would name a
    // folder above it, so only a plain name is taken from the hub's headers.
    const plain = (v: string | null | undefined): string | null => (v !== null && v !== undefined && /^[\w.-]{1,128}$/.test(v) && !/^\.+$/.test(v) ? v : null);
    const commit = plain(header('x-repo-commit')) ?? revision;
    const etag = plain((header('x-linked-etag') ?? header('etag'))?.replace(/^W\//, '').replaceAll('"', ''));
    return { bytes: Buffer.concat(chunks), commit, etag, url };
  }
}

/** The hub has no such repo (or no config.json in it): the resolver says what it tried. */
export class HubNotFound extends Error {}
