import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { LmBenchError } from '../errors.js';

/**
 * Bearer-token check for every route that changes state. Both sides are hashed to 32 bytes first,
 * so the comparison is constant-time whatever the lengths. With no token configured, writes are
 * refused outright (safe by default): the service never runs open.
 */
const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export function tokenMatches(expected: string, given: string): boolean {
  return timingSafeEqual(digest(expected), digest(given));
}

export function requireToken(expected: string | null): (req: FastifyRequest) => Promise<void> {
  const want = expected === null ? null : digest(expected);
  return (req) => {
    if (want === null) {
      return Promise.reject(new LmBenchError('LMB_ERR_UNAUTHORIZED', 'this service has no API token configured (LMB_API_TOKEN or token_file), so it accepts no writes'));
    }
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m?.[1] === undefined || !timingSafeEqual(want, digest(m[1]))) {
      return Promise.reject(new LmBenchError('LMB_ERR_UNAUTHORIZED', 'missing or wrong bearer token (Authorization: Bearer <token>)'));
    }
    return Promise.resolve();
  };
}
