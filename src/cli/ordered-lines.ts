import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import { LmBenchError } from '../errors.js';

/**
 * A JSON Lines file written while the run goes, in the workload's order: answers complete out of order,
 * so a request's line waits until every earlier one is out, then goes with its neighbours in writes of
 * about a megabyte. It is written beside its path and renamed onto it once the run succeeded, so a run
 * that fails leaves the path as it was (the whole file used to be written at the end).
 */
export class OrderedLines {
  private readonly pending = new Map<number, string>();
  private next = 0;
  private buffered: string[] = [];
  private bufferedChars = 0;
  private fd: number | null = null;
  private done = false;
  /** Where the lines go until the run succeeded (`removeWhenGone` watches it). */
  readonly partial: string;
  private readonly flag: string;
  private readonly path: string;

  constructor(flag: string, path: string) {
    this.flag = flag;
    this.path = path;
    this.partial = `${path}.${process.pid}.partial`;
  }

  put(position: number, line: string): void {
    this.pending.set(position, line);
    for (let l = this.pending.get(this.next); l !== undefined; l = this.pending.get(this.next)) {
      this.pending.delete(this.next++);
      this.buffered.push(l);
      this.bufferedChars += l.length;
    }
    if (this.bufferedChars >= 1 << 20) this.flush();
  }

  /** Every line out, the file in place. */
  finish(): void {
    this.flush();
    this.io(() => {
      closeSync(this.fd as number);
      this.fd = null;
      renameSync(this.partial, this.path);
    });
    this.done = true;
  }

  /** A run that failed: the partial file removed (nothing once finished). */
  discard(): void {
    if (this.done) return;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.partial, { force: true });
  }

  private flush(): void {
    this.io(() => {
      if (this.fd === null) {
        mkdirSync(dirname(this.path), { recursive: true });
        this.fd = openSync(this.partial, 'w');
      }
      writeSync(this.fd, this.buffered.join(''));
    });
    this.buffered = [];
    this.bufferedChars = 0;
  }

  /** A write the user's path refused is their error, with the flag (run-output.ts `writeOutput` words it so). */
  private io(f: () => void): void {
    try {
      f();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${this.flag} ${this.path}: cannot write there (${why})`, { cause: err, details: { field: this.flag, value: this.path } });
    }
  }
}

/**
 * The partial files removed however this process ends, a Ctrl-C (SIGINT) or SIGTERM included. `sim run`
 * is one synchronous simulation: a signal ends the process at once, before any `finally` or handler of
 * ours could run (a handler would run only once the simulation was over, so Ctrl-C would not stop it).
 * A small watcher process holds the read end of a pipe from us, sees it close however we end, and removes
 * what is still there: nothing once the run renamed its files into place. It ignores the signals a
 * terminal's Ctrl-C sends to it too. Failures inside the run are still cleaned up at once (`discard`).
 */
export function removeWhenGone(partials: readonly string[]): void {
  const script = [
    "for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});",
    "const { rmSync } = require('node:fs');",
    'let done = false;',
    "const clean = () => { if (done) return; done = true; for (const p of process.argv.slice(1)) { try { rmSync(p, { force: true }); } catch {} } };",
    "process.stdin.on('end', clean).on('close', clean).on('error', clean).resume();",
  ].join('\n');
  const watcher = spawn(process.execPath, ['-e', script, ...partials], { stdio: ['pipe', 'ignore', 'ignore'] });
  // Without a watcher (no process could start) a signal may leave a partial file; the run goes on.
  watcher.on('error', () => {});
  watcher.stdin.on('error', () => {});
  watcher.unref();
  // Our end of the pipe keeps nothing waiting: it closes when we exit.
  (watcher.stdin as Socket).unref();
}

