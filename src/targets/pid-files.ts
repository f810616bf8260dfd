import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { procStatFields } from './process.js';

/**
 * Pid files of the processes a local target starts per trial slot (a `vllm serve`, a user's harness),
 * so that a study resumed after its controller was killed (kill -9, a crash) stops what that controller
 * left running before it starts the same trials again on the same GPUs.
 *
 * A file holds the pid and, where /proc has it, the process's start time in clock ticks since boot: a
 * pid the kernel has since given to another process has another start time and is left alone.
 */

/** Clock ticks since boot at which `pid` started (/proc/PID/stat, field 22), or null (gone, or not Linux). */
export function processStartTicks(pid: number): string | null {
  // Field 22 is the 20th from the state (field 3).
  return procStatFields(pid)?.[19] ?? null;
}

/** `<stateDir>/<prefix>-slot-<slot>.pid`. */
export function slotPidFile(stateDir: string, prefix: string, slot: number): string {
  return join(stateDir, `${prefix}-slot-${slot}.pid`);
}

export function writePidFile(file: string, pid: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const started = processStartTicks(pid);
  writeFileSync(file, started === null ? `${pid}\n` : `${pid} ${started}\n`);
}

/**
 * Stops what a killed controller left running: every `<prefix>-slot-*.pid` in `stateDir` whose process
 * is still the one recorded gets its process group killed, and the file is removed. A file without a
 * start time (written where /proc was not, or by an older lm-bench) is trusted only if `legacyCheck`
 * accepts the process's command line. Returns the pids stopped.
 */
export function reapSlotProcesses(stateDir: string, prefix: string, legacyCheck: (argv: readonly string[]) => boolean): number[] {
  let names: string[];
  try {
    const pattern = new RegExp(`^${prefix}-slot-\\d+\\.pid$`);
    names = readdirSync(stateDir).filter((n) => pattern.test(n));
  } catch {
    return [];
  }
  const stopped: number[] = [];
  for (const name of names) {
    const file = join(stateDir, name);
    const [pidText, started] = readFileSync(file, 'utf8').trim().split(/\s+/);
    rmSync(file, { force: true });
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    const now = processStartTicks(pid);
    let ours: boolean;
    if (started !== undefined && now !== null) ours = now === started;
    else {
      let argv: string[];
      try {
        argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        continue; // gone already
      }
      ours = legacyCheck(argv);
    }
    if (!ours) continue;
    try {
      process.kill(-pid, 'SIGKILL');
      stopped.push(pid);
    } catch {
      // raced with its exit
    }
  }
  return stopped;
}
