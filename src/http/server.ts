import type { FastifyInstance } from 'fastify';
import { openStore } from '../store/sqlite-store.js';
import { buildApp } from './app.js';
import { resolveToken, type ServiceConfig } from './config.js';
import { listenError } from '../util/listen.js';

/**
 * The only place that listens (fastify/demo's `server.ts`): opens the store, builds the app, binds
 * (loopback unless told otherwise) and wires SIGTERM/SIGINT to a graceful close — stop accepting,
 * let running trials finish within the grace period or leave them to resume, close the store.
 */
export interface StartOptions {
  readonly config: ServiceConfig;
  readonly dbPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger?: boolean | { level: string };
  /** Install SIGTERM/SIGINT handlers (default true). */
  readonly signals?: boolean;
}

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly url: string;
  /** Resolves when the server has closed (after a signal or `close()`). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const token = resolveToken(opts.config, opts.env);
  const store = openStore(opts.dbPath);
  let app: FastifyInstance;
  try {
    app = await buildApp({ store, dbPath: opts.dbPath, config: opts.config, token, logger: opts.logger ?? { level: 'info' } });
  } catch (err) {
    store.close();
    throw err;
  }
  let url: string;
  try {
    url = await app.listen({ host: opts.config.host, port: opts.config.port });
  } catch (err) {
    // Nothing may be left open: the app owns the store and the worker pools.
    await app.close();
    throw listenError(err, opts.config.host, opts.config.port);
  }
  let closing: Promise<void> | undefined;
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const close = (): Promise<void> => {
    closing ??= app.close().finally(() => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolveClosed();
    });
    return closing;
  };
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) process.exit(130);
    app.log.info({ signal: sig, grace_ms: opts.config.shutdown_grace_ms }, 'shutting down: running trials get the grace period, then resume on the next start');
    void close();
  };
  if (opts.signals !== false) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  return { app, url, closed, close };
}
