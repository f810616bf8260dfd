import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Slurm cluster the tests may use: only the one scripts/slurm-local.sh started on this machine
 * and marked as its own (`slurm-local.sh owned`: the marker's token in the slurm.conf slurmctld
 * reads, its ClusterName, its live slurmctld). Any other cluster — a developer's, or an HPC login
 * node's production one — is never submitted to: the Slurm tests skip, naming it. `.ci/run` sets
 * LMB_REQUIRE_SLURM=1 only when it started or verified its own cluster, so there a cluster of ours
 * that stopped answering fails the suite; a foreign one is still only a skip.
 */
export interface LocalSlurm {
  /** false when the tests may use the cluster; else why they skip. */
  readonly skip: string | false;
  /** The partition slurm-local.sh made (from its marker). */
  readonly partition: string;
  readonly cluster: string;
}

const script = fileURLToPath(new URL('../../scripts/slurm-local.sh', import.meta.url));
const ANSWER_TIMEOUT_MS = 30_000;

/** Asks `slurm-local.sh owned` (a real child process); `env` replaces this process's (PATH, LMB_SLURM_STATE, LMB_REQUIRE_SLURM). */
export function localSlurm(env: NodeJS.ProcessEnv = process.env): LocalSlurm {
  const r = spawnSync('bash', [script, 'owned'], { encoding: 'utf8', timeout: ANSWER_TIMEOUT_MS, env });
  const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status === 0) {
    const value = (k: string): string => new RegExp(`^${k}=(.+)$`, 'm').exec(r.stdout)?.[1]?.trim() ?? '';
    return { skip: false, partition: value('partition'), cluster: value('cluster') };
  }
  const why = r.error !== undefined ? `slurm-local.sh owned did not answer: ${r.error.message}` : said.split('\n')[0] || `slurm-local.sh owned exited ${String(r.status)}`;
  // A foreign cluster (exit 3) is a skip even where a cluster is required: CI never takes over someone else's.
  if (r.status !== 3 && env['LMB_REQUIRE_SLURM'] === '1') throw new Error(`LMB_REQUIRE_SLURM=1 but the suite's own Slurm cluster does not answer (${why}); start it with scripts/slurm-local.sh up`);
  const hint = r.status === 3 ? 'the Slurm tests use only a cluster scripts/slurm-local.sh started here' : 'scripts/slurm-local.sh install && scripts/slurm-local.sh up starts one';
  return { skip: `${why}; ${hint}`, partition: '', cluster: '' };
}

/** Why the Slurm tests skip here, or false when the suite's own cluster answers. */
export function slurmSkipReason(env: NodeJS.ProcessEnv = process.env): string | false {
  return localSlurm(env).skip;
}

/**
 * A folder of wrappers to put first on a controller's PATH, over the real cluster's commands, for
 * the faults a one-node test cluster cannot produce on one study without touching every other
 * test's jobs (MinJobAge is cluster-wide; a slow slurmctld slows everyone):
 * - `sbatch` logs each submission's comment to `sbatch.log` (so a test counts sbatch calls), and
 *   blocks while `hold-before-<name>` (before submitting) or `hold-after-<name>` (after, before
 *   printing the id) exists, writing its pid to `<file>.reached` when it gets there. Then it is the real sbatch.
 * - `squeue` is the real squeue less the job ids listed in `forget` (a record Slurm purged), and
 *   less those in `hide-once` for a single call each (an answer that missed a job once).
 */
export function slurmWrappers(dir: string): { bin: string; ctl: string } {
  const bin = join(dir, 'bin');
  const ctl = join(dir, 'ctl');
  mkdirSync(bin, { recursive: true });
  mkdirSync(ctl, { recursive: true });
  const real = (cmd: string): string => {
    const r = spawnSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
    return r.stdout.trim() || cmd;
  };
  const sbatch = `#!/bin/bash
ctl=${JSON.stringify(ctl)}
name=''; comment=''; test_only=0
for a in "$@"; do
  case "$a" in --job-name=*) name="\${a#--job-name=}" ;; --comment=*) comment="\${a#--comment=}" ;; --test-only) test_only=1 ;; esac
done
hold() { [ -e "$ctl/$1" ] || return 0; echo $$ > "$ctl/$1.reached"; while [ -e "$ctl/$1" ]; do sleep 0.05; done; }
[ "$test_only" = 1 ] && exec ${real('sbatch')} "$@"
hold "hold-before-$name"
echo "$comment" >> "$ctl/sbatch.log"
out="$(${real('sbatch')} "$@")"; rc=$?
hold "hold-after-$name"
printf '%s\\n' "$out"
exit $rc
`;
  const squeue = `#!/bin/bash
ctl=${JSON.stringify(ctl)}
out="$(${real('squeue')} "$@" 2>/tmp/lmb-squeue-err.$$)"; rc=$?
err="$(cat /tmp/lmb-squeue-err.$$)"; rm -f /tmp/lmb-squeue-err.$$
[ "$rc" = 0 ] || { printf '%s\\n' "$err" >&2; exit $rc; }
hidden=" $(cat "$ctl/forget" 2>/dev/null | tr '\\n' ' ') "
if [ -s "$ctl/hide-once" ]; then hidden="$hidden $(cat "$ctl/hide-once" | tr '\\n' ' ') "; : > "$ctl/hide-once"; fi
kept="$(printf '%s\\n' "$out" | while IFS= read -r line; do id="\${line%%$(printf '\\037')*}"; [ -n "$line" ] && case "$hidden" in *" $id "*) ;; *) printf '%s\\n' "$line" ;; esac; done)"
# Like the real squeue, asked for ids it knows none of: exit 1, "Invalid job id specified".
if [ -z "$kept" ] && printf '%s\\n' "$@" | grep -q '^--jobs='; then echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1; fi
[ -z "$kept" ] || printf '%s\\n' "$kept"
`;
  writeFileSync(join(bin, 'sbatch'), sbatch);
  writeFileSync(join(bin, 'squeue'), squeue);
  chmodSync(join(bin, 'sbatch'), 0o755);
  chmodSync(join(bin, 'squeue'), 0o755);
  return { bin, ctl };
}
