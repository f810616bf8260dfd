import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobPhase, queueReasonText } from '../../../src/targets/slurm/job-states.js';

test("Slurm's job states map to queue time, run time, and whose fault the end was", () => {
  assert.deepEqual(jobPhase('PENDING'), { phase: 'queued' });
  assert.deepEqual(jobPhase('REQUEUED'), { phase: 'queued' });
  assert.deepEqual(jobPhase('RUNNING'), { phase: 'running' });
  assert.deepEqual(jobPhase('COMPLETING'), { phase: 'running' });
  const ends: Record<string, string> = {
    COMPLETED: 'completed',
    FAILED: 'failed',
    OUT_OF_MEMORY: 'out_of_memory',
    TIMEOUT: 'timeout',
    DEADLINE: 'timeout',
    PREEMPTED: 'cluster_fault',
    NODE_FAIL: 'cluster_fault',
    BOOT_FAIL: 'cluster_fault',
    CANCELLED: 'cancelled',
  };
  for (const [state, end] of Object.entries(ends)) assert.deepEqual(jobPhase(state), { phase: 'ended', end }, state);
  // squeue may suffix a state ("CANCELLED+"); a word a newer Slurm adds is asked about again, never read as an end.
  assert.deepEqual(jobPhase('CANCELLED+'), { phase: 'ended', end: 'cancelled' });
  assert.deepEqual(jobPhase('SOME_NEW_STATE'), { phase: 'queued' });
  assert.equal(queueReasonText('Resources'), 'waiting for free GPUs');
  assert.equal(queueReasonText('Dependency'), 'Dependency');
});
