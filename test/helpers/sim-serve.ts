import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));

export interface SimServeProcess {
  /** http://127.0.0.1:PORT, once the server says it listens. */
  readonly url: string;
  /** What it wrote to stderr up to that announcement (vLLM's start-up lines). */
  readonly startupLog: string;
  /** SIGTERM, then the exit code. */
  close(): Promise<number | null>;
}

/**
 * `lm-bench sim serve ARGS --port 0` as its own process, resolved when it announces the URL it
 * listens on. A child process, not the in-process server, where the test measures the client: the
 * simulator's work then does not count as the load generator's event-loop lag or CPU.
 */
export function startSimServe(args: readonly string[], timeoutMs = 20_000): Promise<SimServeProcess> {
  const child = spawn(process.execPath, [bin, 'sim', 'serve', ...args, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const close = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return new Promise<SimServeProcess>((ok, fail) => {
    let stderr = '';
    let listening = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`sim serve did not listen within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    // Read to the end even after the announcement: a pipe nobody drains would block the child.
    child.stderr.on('data', (d: Buffer) => {
      if (listening) return;
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m !== null) {
        listening = true;
        clearTimeout(timer);
        ok({ url: m[1] as string, startupLog: stderr, close });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`sim serve exited ${String(code)} before listening: ${stderr}`));
    });
  });
}
