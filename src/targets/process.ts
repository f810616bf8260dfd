import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Child-process plumbing shared by the vllm and command targets: argv only (never a shell), the
 * last lines of output kept for failure reasons, and a stop that escalates SIGTERM → SIGKILL.
 */
export class LineTail {
  readonly #max: number;
  readonly #lines: string[] = [];
  #partial = '';
  /** Inside a line already cut at MAX_LINE: the rest of it, up to its newline, is dropped. */
  #cut = false;

  constructor(maxLines = 40) {
    this.#max = maxLines;
  }

  push(chunk: Buffer | string): void {
    const parts = chunk.toString().split(/\r?\n/);
    const last = parts.length - 1;
    for (const [i, part] of parts.entries()) {
      // A process that prints without newlines (binary, a progress bar with \r) no longer grows one line
      // without bound: a line is kept to its first MAX_LINE characters, since a trial's reason and the
      // history store it.
      if (!this.#cut) this.#partial += part.slice(0, MAX_LINE + 1 - this.#partial.length);
      if (i === last) break;
      // A cut line was kept when it was cut; its newline only ends the dropping.
      if (!this.#cut) this.#add(this.#partial);
      this.#partial = '';
      this.#cut = false;
    }
    if (this.#partial.length > MAX_LINE) {
      this.#add(this.#partial);
      this.#partial = '';
      this.#cut = true;
    }
  }

  #add(text: string): void {
    // A \r\n split between two chunks leaves the \r on the line.
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    this.#lines.push(line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} …` : line);
    if (this.#lines.length > this.#max) this.#lines.shift();
  }

  text(): string {
    const all = this.#partial === '' ? this.#lines : [...this.#lines, this.#partial];
    return all.slice(-this.#max).join('\n').trim();
  }
}

/** The most of one output line kept (a failure reason quotes the last lines). */
const MAX_LINE = 2000;

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
    // 'close' waits for the pipes, which a background grandchild (`server &` in a wrapper script) holds
    // for as long as it lives: waiting on it alone hung a trial past its timeout. The exit is what counts;
    // the pipes get a moment to drain its last lines, then are let go.
    child.once('exit', (code, signal) => {
      const status = code ?? (signal === null ? 1 : 128 + signalNumber(signal));
      const drained = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve(status);
      }, DRAIN_MS);
      child.once('close', () => {
        clearTimeout(drained);
        resolve(status);
      });
    });
  });
  return { child, stdout, stderr, exited };
}

/** How long the pipes may stay open after the process exits before its output is taken as complete. */
const DRAIN_MS = 500;

function signalNumber(signal: NodeJS.Signals): number {
  return signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 1;
}

/**
 * Signals the child's whole process group. The group outlives its leader while anything the leader
 * started still runs (vLLM's engine-core processes, a harness's background helper), so it is signalled
 * even when the leader itself has exited: skipping it then left those running, holding GPUs and pipes.
 * Linux hands out no pid that is still a live group's id, so the group is still the one spawned here.
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/**
 * The fields of /proc/PID/stat after "pid (comm)", from the state (field 3) on, or null when the process
 * is gone (or this is not Linux). comm may hold spaces and parentheses, so they are read after the last ')'.
 */
export function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * Whether any process of the child's group still runs. A zombie does not count: its reaper is init,
 * which in a container may never get to it, and it holds nothing. Without /proc (not Linux), any
 * process the group's id still reaches counts.
 */
function groupAlive(child: ChildProcess): boolean {
  if (child.pid === undefined) return false;
  if (child.exitCode === null && child.signalCode === null) return true;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    try {
      process.kill(-child.pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const pid of pids) {
    const fields = procStatFields(Number(pid));
    if (fields === null) continue; // gone meanwhile
    const [state, , pgrp] = fields;
    if (pgrp === String(child.pid) && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

/**
 * SIGTERM to the process group, then SIGKILL after `graceMs` if the leader or anything of its group is
 * still alive. Resolves when the leader has exited and its group is gone (or was sent SIGKILL).
 */
export async function stopProcess(p: Spawned, graceMs = 5000): Promise<number> {
  killGroup(p.child, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  let timer: NodeJS.Timeout | undefined;
  const escalate = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  await Promise.race([p.exited, escalate]);
  clearTimeout(timer);
  // The leader is gone or the grace spent: what is left of its group has until the deadline.
  while (groupAlive(p.child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (groupAlive(p.child)) killGroup(p.child, 'SIGKILL');
  return p.exited;
}
