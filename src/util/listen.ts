import { LmBenchError } from '../errors.js';

/**
 * A failed `listen` as the user's mistake it usually is: a port in use or not allowed names
 * `--port`, a host that does not resolve or is not on this machine names `--host`. Anything else
 * stays an operational failure with the OS's reason.
 */
export function listenError(err: unknown, host: string, port: number): LmBenchError {
  const code = (err as { code?: unknown }).code;
  const why = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'EADDRINUSE':
      return new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--port ${port}: address already in use on ${host}`, { cause: err, details: { field: 'port', value: port } });
    case 'EACCES':
      return new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--port ${port}: not allowed to listen there (ports below 1024 need privileges)`, { cause: err, details: { field: 'port', value: port } });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EADDRNOTAVAIL':
      return new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--host ${JSON.stringify(host)}: cannot listen there (${String(code)}: not an address of this machine)`, { cause: err, details: { field: 'host', value: host } });
    default:
      return new LmBenchError('LMB_ERR_LISTEN_FAILED', `cannot listen on ${host}:${port}: ${why}`, { cause: err, details: { host, port } });
  }
}
