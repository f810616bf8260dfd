import { hostname } from 'node:os';
import { LmBenchError } from '../errors.js';
import type { Store } from '../store/store.js';
import { processStartTicks } from '../targets/pid-files.js';

/** This process: its pid, its host, and when it started (so a reused pid is not taken for it). */
function controllerId(pid: number): { pid: number; host: string; started: string | null } {
  return { pid, host: hostname(), started: processStartTicks(pid) };
}

/** Whether the controller an event names still runs: same host, the pid alive, and (on Linux) the same process. */
function controllerRuns(c: { pid?: unknown; host?: unknown; started?: unknown }): boolean {
  if (c.host !== hostname() || typeof c.pid !== 'number' || c.pid === process.pid) return false;
  try {
    process.kill(c.pid, 0);
  } catch (err) {
    // EPERM: alive, someone else's.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = controllerId(c.pid);
  return c.started === null || now.started === null || now.started === c.started;
}

/**
 * Claims the study for this process's loop, or refuses: a second `tune` of a study another process on
 * this machine still runs would take that one's running trials for a crash's orphans and run them again,
 * and both would spend the budget (two controllers ran 7 trials of a budget of 6, two of them twice).
 * A killed controller's claim lapses with its process; one process (the service) keeps its own studies
 * apart. Returns the release, which the loop calls however it ends.
 */
export function claimStudy(store: Store, studyId: number, name: string): () => void {
  const me = store.appendEvent({ studyId, kind: 'controller', payload: controllerId(process.pid) });
  const release = (): void => {
    try {
      store.appendEvent({ studyId, kind: 'controller_ended', payload: { controller: me.id } });
    } catch {
      // the store is closed already: the claim lapses with this process
    }
  };
  const ended = new Set(store.listEvents({ studyId, kind: 'controller_ended' }).map((e) => (e.payload as { controller?: unknown }).controller));
  const other = store
    .listEvents({ studyId, kind: 'controller' })
    .find((e) => e.id < me.id && !ended.has(e.id) && controllerRuns(e.payload as Record<string, unknown>));
  if (other !== undefined) {
    release();
    const pid = (other.payload as { pid: number }).pid;
    throw new LmBenchError('LMB_ERR_STUDY_BUSY', `study "${name}" is being run by process ${pid} on this machine (since ${new Date(other.at_ms).toISOString()}); let it finish, or stop it (Ctrl-C) and then resume`, {
      details: { field: 'study', pid },
    });
  }
  return release;
}

/**
 * How long the study's earlier controllers ran, in ms: each from its `controller` event to its
 * `controller_ended`, or, for one killed without ending, to the last thing it recorded before the next
 * controller started (a trial it finished, a rule it learned). `--budget-hours` is the study's running
 * time: a resume, or a service restart resuming its studies, goes on with what is left, where each used
 * to start the clock again and a study restarted often enough never ran out of time.
 */
export function earlierRunMs(store: Store, studyId: number): number {
  const events = store.listEvents({ studyId });
  const ended = new Map<unknown, number>();
  for (const e of events) if (e.kind === 'controller_ended') ended.set((e.payload as { controller?: unknown }).controller, e.at_ms);
  const starts = events.filter((e) => e.kind === 'controller');
  let total = 0;
  for (const [i, c] of starts.entries()) {
    const nextId = starts[i + 1]?.id ?? Number.POSITIVE_INFINITY;
    const lastOwn = events.filter((e) => e.id > c.id && e.id < nextId && e.kind !== 'controller_ended').reduce((t, e) => Math.max(t, e.at_ms), c.at_ms);
    total += Math.max(0, (ended.get(c.id) ?? lastOwn) - c.at_ms);
  }
  return total;
}
