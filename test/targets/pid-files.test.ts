import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reapStaleHarnesses } from '../../src/targets/command-target.js';
import { processStartTicks, slotPidFile, writePidFile } from '../../src/targets/pid-files.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return processStartTicks(pid) !== null;
  } catch {
    return false;
  }
};

/** A process group of our own, as a target starts its harness (detached: its own group). */
function sleeper(): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { detached: true, stdio: 'ignore' });
  child.unref();
  assert.ok(child.pid !== undefined);
  return child.pid;
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

test('a harness a killed controller left running is stopped by its pid file; a pid now someone else\'s is left alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-pids-'));
  const left = sleeper();
  const other = sleeper();
  t.after(() => {
    for (const pid of [left, other]) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // stopped already
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  writePidFile(slotPidFile(dir, 'command', 0), left);
  // A file whose process has since been replaced: the same pid, another start time.
  writeFileSync(slotPidFile(dir, 'command', 1), `${other} 1\n`);
  // Another target's file is not this reaper's.
  writePidFile(slotPidFile(dir, 'vllm', 0), other);

  assert.deepEqual(reapStaleHarnesses(dir), [left]);
  assert.ok(await gone(left), 'the left-over harness was stopped');
  assert.ok(alive(other), 'a process that is not the recorded one is left alone');
  assert.equal(existsSync(slotPidFile(dir, 'command', 0)), false);
  assert.equal(existsSync(slotPidFile(dir, 'command', 1)), false, 'a stale file is removed');
  assert.equal(existsSync(slotPidFile(dir, 'vllm', 0)), true);
});
