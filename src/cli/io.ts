import type { Writable } from 'node:stream';

/** What a command may touch of the outside world; tests pass their own. */
export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** A command: parses its own argv (after the command name) and returns an exit status. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, jsonReplacer, 2)}\n`);
}

/** JSON cannot hold ±Infinity or NaN: write them as vLLM does ("inf") or null. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    if (Number.isNaN(value)) return null;
    return value > 0 ? 'inf' : '-inf';
  }
  return value;
}
