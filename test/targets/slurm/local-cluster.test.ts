import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localSlurm } from '../../helpers/slurm.js';

/**
 * The suite's guard against clusters it did not start (test/helpers/slurm.ts over
 * `scripts/slurm-local.sh owned`), driven with stand-in `scontrol` and `sinfo` first on PATH — real
 * programs answering as a foreign cluster would — so no cluster is needed or touched. Every stand-in
 * Slurm command logs its call, and an `sbatch` or `squeue` call would fail the test.
 */
interface Fake {
  readonly env: NodeJS.ProcessEnv;
  readonly dir: string;
  readonly calls: () => string[];
}

function fakeCluster(opts: { clusterName: string | null; partitions: string; conf?: string; pidFile?: string }): Fake {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-fake-slurm-'));
  const bin = join(dir, 'bin');
  const state = join(dir, 'state');
  mkdirSync(bin);
  mkdirSync(state);
  const log = join(dir, 'calls.log');
  const write = (name: string, body: string): void => {
    writeFileSync(join(bin, name), `#!/bin/bash\necho "${name} $*" >> '${log}'\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  write(
    'scontrol',
    opts.clusterName === null
      ? `echo 'slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)' >&2; exit 1`
      : `[ "$1 $2" = "show config" ] || exit 1
cat <<EOF
Configuration data as of 2026-01-01T00:00:00
ClusterName             = ${opts.clusterName}
SLURM_CONF              = ${opts.conf ?? '/etc/slurm/slurm.conf'}
SlurmctldPidFile        = ${opts.pidFile ?? '/run/slurmctld.pid'}
EOF`,
  );
  write('sinfo', `case "$*" in *%P*) printf '%s\\n' ${opts.partitions} ;; *) echo idle ;; esac`);
  for (const forbidden of ['sbatch', 'squeue', 'scancel']) write(forbidden, 'exit 99');
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, LMB_SLURM_STATE: state, LMB_REQUIRE_SLURM: '1' };
  return { env, dir, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : []) };
}

function timed<T>(f: () => T): { value: T; ms: number } {
  const t0 = performance.now();
  const value = f();
  return { value, ms: performance.now() - t0 };
}

const noJobCommands = (fake: Fake): void => assert.deepEqual(fake.calls().filter((c) => /^(sbatch|squeue|scancel) /.test(c)), [], 'no job command ran');

describe('the Slurm tests use only the cluster scripts/slurm-local.sh started', { timeout: 60_000 }, () => {
  test('a foreign cluster with partition debug: skipped at once, naming it, even with LMB_REQUIRE_SLURM=1', { timeout: 20_000 }, () => {
    const fake = fakeCluster({ clusterName: 'prod-hpc', partitions: 'debug*' });
    const { value, ms } = timed(() => localSlurm(fake.env));
    assert.equal(typeof value.skip, 'string');
    assert.match(value.skip as string, /not started by scripts\/slurm-local\.sh.*ClusterName=prod-hpc.*partitions: debug\*/);
    assert.match(value.skip as string, /no marker/);
    assert.ok(ms < 5000, `decided in ${Math.round(ms)} ms`);
    noJobCommands(fake);
  });

  test("a cluster calling itself lmb-local whose slurm.conf lacks the marker's token is foreign too", { timeout: 20_000 }, () => {
    const conf = join(mkdtempSync(join(tmpdir(), 'lmb-fake-conf-')), 'slurm.conf');
    writeFileSync(conf, 'ClusterName=lmb-local\n# lmb-local-token: someone-elses\n');
    const fake = fakeCluster({ clusterName: 'lmb-local', partitions: 'debug*', conf });
    writeFileSync(join(fake.env['LMB_SLURM_STATE'] as string, 'owner'), `token=ours\ncluster=lmb-local\npartition=gpu\nslurmctld_pid=1\nconf=${conf}\n`);
    assert.match(String(localSlurm(fake.env).skip), /ClusterName=lmb-local.*does not hold the marker's token/);
    noJobCommands(fake);
  });

  test('the marked cluster is used, with the partition its marker names; once its slurmctld is gone it is not', { timeout: 20_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lmb-fake-own-'));
    const conf = join(dir, 'slurm.conf');
    writeFileSync(conf, '# lmb-local-token: 0123abcd\nClusterName=lmb-local\n');
    // A live process whose name is slurmctld stands for the controller the marker names.
    copyFileSync('/bin/sleep', join(dir, 'slurmctld'));
    chmodSync(join(dir, 'slurmctld'), 0o755);
    const ctld: ChildProcess = spawn(join(dir, 'slurmctld'), ['30'], { stdio: 'ignore' });
    const pidFile = join(dir, 'slurmctld.pid');
    writeFileSync(pidFile, `${String(ctld.pid)}\n`);
    try {
      const fake = fakeCluster({ clusterName: 'lmb-local', partitions: 'debug*', conf, pidFile });
      writeFileSync(join(fake.env['LMB_SLURM_STATE'] as string, 'owner'), `token=0123abcd\ncluster=lmb-local\npartition=debug\nslurmctld_pid=${String(ctld.pid)}\nconf=${conf}\n`);
      const own = localSlurm(fake.env);
      assert.equal(own.skip, false);
      assert.equal(own.partition, 'debug');
      ctld.kill('SIGKILL');
      await new Promise((r) => ctld.once('exit', r));
      assert.match(String(localSlurm(fake.env).skip), /slurmctld \d+ is not the marker's \(\d+, gone\)/);
      noJobCommands(fake);
    } finally {
      ctld.kill('SIGKILL');
    }
  });

  test('no cluster answering: a skip with the reason, and a failure where LMB_REQUIRE_SLURM=1 asks for the suite’s own', { timeout: 20_000 }, () => {
    const fake = fakeCluster({ clusterName: null, partitions: '' });
    assert.throws(() => localSlurm(fake.env), /LMB_REQUIRE_SLURM=1 but the suite's own Slurm cluster does not answer \(no Slurm cluster answers/);
    const relaxed = localSlurm({ ...fake.env, LMB_REQUIRE_SLURM: '' });
    assert.match(String(relaxed.skip), /no Slurm cluster answers on this machine; scripts\/slurm-local\.sh install/);
  });
});
