/**
 * What a Slurm job state means for the trial (pure). Slurm's states (squeue/scontrol JobState) fall
 * into: still waiting for resources (queue time, not trial time), running, and the end states, each
 * of which is either the configuration's own outcome (it ran, failed, ran out of memory, outlived
 * its limit), or the cluster's doing (preemption, a node that failed or never booted: resubmit, and
 * never count it against the configuration), or a person's (cancelled).
 */
export type JobPhase =
  | { readonly phase: 'queued' }
  | { readonly phase: 'running' }
  | { readonly phase: 'ended'; readonly end: JobEnd };

export type JobEnd = 'completed' | 'failed' | 'out_of_memory' | 'timeout' | 'cluster_fault' | 'cancelled';

const QUEUED = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'RESIZING', 'SPECIAL_EXIT', 'REVOKED']);
const RUNNING = new Set(['RUNNING', 'COMPLETING', 'STAGE_OUT']);
const ENDS: Record<string, JobEnd> = {
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

/** The phase of a JobState word; an unknown word (a newer Slurm) counts as still queued, to be asked again. */
export function jobPhase(state: string): JobPhase {
  const word = state.toUpperCase().replace(/\+$/, '');
  const end = ENDS[word];
  if (end !== undefined) return { phase: 'ended', end };
  if (RUNNING.has(word)) return { phase: 'running' };
  if (QUEUED.has(word)) return { phase: 'queued' };
  return { phase: 'queued' };
}

/** Words for people: what squeue's pending reasons mean for a user waiting on a study. */
export function queueReasonText(reason: string): string {
  switch (reason) {
    case 'Resources':
      return 'waiting for free GPUs';
    case 'Priority':
      return 'behind higher-priority jobs';
    case 'QOSMaxJobsPerUserLimit':
    case 'AssocMaxJobsLimit':
      return 'at the per-user job limit';
    case 'ReqNodeNotAvail':
    case 'PartitionNodeLimit':
      return 'no node can take it now';
    case '':
    case 'None':
      return 'queued';
    default:
      return reason;
  }
}
