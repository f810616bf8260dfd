import { spawnSync } from 'node:child_process';

/**
 * Whether a Slurm cluster answers on this machine (scripts/slurm-local.sh up starts one). Without one
 * the cluster tests are skipped with the reason; `.ci/run` starts the cluster and sets
 * LMB_REQUIRE_SLURM=1, so there a missing cluster fails the suite instead of skipping it.
 */
export function slurmSkipReason(): string | false {
  const r = spawnSync('sinfo', ['--noheader', '--format=%T'], { encoding: 'utf8', timeout: 10_000 });
  const up = r.status === 0 && /\b(idle|mixed|allocated)\b/.test(r.stdout);
  if (up) return false;
  const why = r.error !== undefined ? 'sinfo is not installed' : `sinfo says: ${(r.stderr || r.stdout).trim().split('\n')[0] ?? 'no idle node'}`;
  if (process.env['LMB_REQUIRE_SLURM'] === '1') throw new Error(`LMB_REQUIRE_SLURM=1 but no Slurm cluster answers (${why}); start one with scripts/slurm-local.sh up`);
  return `no Slurm cluster on this machine (${why}); scripts/slurm-local.sh install && scripts/slurm-local.sh up starts one`;
}
