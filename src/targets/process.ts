import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Child-process plumbing shared by the vllm and command targets: argv only (never a shell), the
 * last lines of output kept for failure reasons, and a stop that escalates SIGTERM → SIGKILL.
 */
export class LineTail {
  readonly #max: number;
  readonly #lines: string[] = [];
  #partial = '';

  constructor(maxLines = 40) {
    this.#max = maxLines;
  }

  push(chunk: Buffer | string): void {
    const text = this.#partial + chunk.toString();
    const parts = text.split(/\r?\n/);
    this.#partial = parts.pop() ?? '';
    for (const line of parts) {
      this.#lines.push(line);
      if (this.#lines.length > this.#max) this.#lines.shift();
    }
  }

  text(): string {
    const all = this.#partial === '' ? this.#lines : [...this.#lines, this.#partial];
    return all.slice(-this.#max).join('\n').trim();
  }
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: LineTail;
  readonly stderr: LineTail;
  /** Resolves with the exit code (or 128+signal) when the process ends. */
  readonly exited: Promise<number>;
}

export function spawnArgv(argv: readonly string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; echo?: NodeJS.WritableStream } = {}): Spawned {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('empty command');
  const child = spawn(file, args, {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: false,
    // Own process group, so a stop reaches the grandchildren a wrapper script starts.
    detached: true,
  });
  const stdout = new LineTail();
  const stderr = new LineTail();
  child.stdout?.on('data', (d: Buffer) => {
    stdout.push(d);
    opts.echo?.write(d);
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr.push(d);
    opts.echo?.write(d);
  });
  const exited = new Promise<number>((resolve) => {
    child.once('error', (err) => {
      stderr.push(`${err.message}\n`);
      resolve(127);
    });
    child.once('close', (code, signal) => {
      resolve(code ?? (signal === null ? 1 : 128 + signalNumber(signal)));
    });
  });
  return { child, stdout, stderr, exited };
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 1;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM, then SIGKILL after `graceMs` if it is still alive. Resolves when it has exited. */
export async function stopProcess(p: Spawned, graceMs = 5000): Promise<number> {
  killGroup(p.child, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const escalate = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      killGroup(p.child, 'SIGKILL');
      resolve();
    }, graceMs);
  });
  await Promise.race([p.exited, escalate]);
  clearTimeout(timer);
  return p.exited;
}
