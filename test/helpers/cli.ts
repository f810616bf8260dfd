import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../../src/cli/io.js';

/** The CLI's entry as installed (`bin` of package.json). */
export const LMB_BIN = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));

/** A CliIo whose stdout and stderr are captured as text, for calling `main` in-process. */
export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

export function captureIo(cwd: string = process.cwd(), env: Readonly<Record<string, string | undefined>> = {}): CapturedIo {
  let out = '';
  let err = '';
  const sink = (append: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        append(chunk.toString());
        cb();
      },
    });
  return { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)), env, cwd, out: () => out, err: () => err };
}

/** What a run of the real `bin/lm-bench.js` printed and how it exited. */
export interface CliRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `lm-bench ARGS` as a user runs it: a child process of bin/lm-bench.js in `cwd`, with `env` over this
 * process's, killed after `timeoutMs` (a hung command fails its test instead of the suite).
 */
export function runCli(args: readonly string[], opts: { cwd: string; env?: Readonly<Record<string, string>>; timeoutMs?: number }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LMB_BIN, ...args], { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
