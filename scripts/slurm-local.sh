#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for the Slurm target's tests (issue 15) and for
# trying `--target slurm` without a cluster. Needs root and Debian's slurm-wlm and munge packages
# (`install` gets them). The node declares four GPUs for scheduling only: gres.conf points at
# placeholder files, which slurmd notes are not devices and schedules anyway.
#
#   scripts/slurm-local.sh install   apt-get the packages (once)
#   scripts/slurm-local.sh up        write the config, start munged, slurmctld and slurmd, wait until the node is idle
#   scripts/slurm-local.sh down      stop the daemons (the state directory is kept for the logs)
#   scripts/slurm-local.sh status    sinfo, or a non-zero exit when the cluster is not answering
set -euo pipefail

state="${LMB_SLURM_STATE:-/var/lib/lmb-slurm}"
conf=/etc/slurm/slurm.conf
marker='# lm-bench local test cluster (scripts/slurm-local.sh)'
node="$(hostname -s)"

need_root() {
  if [ "$(id -u)" != 0 ]; then echo "slurm-local: must run as root (it starts munged, slurmctld and slurmd)" >&2; exit 2; fi
}

write_config() {
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    echo "slurm-local: $conf exists and was not written by this script; refusing to replace it" >&2
    exit 2
  fi
  mkdir -p /etc/slurm "$state/ctld" "$state/spool" "$state/log" "$state/gpus" /run/lmb-slurm
  for i in 0 1 2 3; do : > "$state/gpus/gpu$i"; done
  # CPUs are over-declared (config_overrides) so that GPUs, not this machine's two cores, decide
  # how many jobs run at once; memory is not a consumable resource (CR_Core).
  cat > "$conf" <<EOF
$marker
ClusterName=lmb-local
SlurmctldHost=$node
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=/run/lmb-slurm/slurmctld.pid
SlurmdPidFile=/run/lmb-slurm/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
GresTypes=gpu
NodeName=$node CPUs=16 RealMemory=8000 Gres=gpu:4 State=UNKNOWN
PartitionName=gpu Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  cat > /etc/slurm/gres.conf <<EOF
$marker
NodeName=$node Name=gpu File=$state/gpus/gpu[0-3]
EOF
}

start_munge() {
  if pgrep -x munged >/dev/null; then return; fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key /run/munge /var/log/munge /var/lib/munge
  chmod 0400 /etc/munge/munge.key
  chmod 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged
}

up() {
  need_root
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "slurm-local: slurm-wlm and munge are not installed (scripts/slurm-local.sh install)" >&2
    exit 2
  fi
  write_config
  start_munge
  # -c: a test cluster starts with an empty queue (jobs saved by an earlier run are dropped).
  pgrep -x slurmctld >/dev/null || slurmctld -c
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 1 60); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
      echo "slurm-local: up ($node, partition gpu, 4 placeholder GPUs; logs in $state/log)"
      return
    fi
    # A node left down by an earlier run comes back on its own (ReturnToService=2), or is told to.
    scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1 || true
    sleep 0.5
  done
  echo "slurm-local: the node did not become idle in 30 s; see $state/log" >&2
  sinfo -N -l >&2 || true
  exit 1
}

down() {
  need_root
  scontrol shutdown >/dev/null 2>&1 || true
  for _ in $(seq 1 40); do
    pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
    sleep 0.25
  done
  pkill -x slurmd 2>/dev/null || true
  pkill -x slurmctld 2>/dev/null || true
  pkill -x munged 2>/dev/null || true
  echo "slurm-local: down"
}

case "${1:-}" in
  install)
    need_root
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
    ;;
  up) up ;;
  down) down ;;
  status) sinfo ;;
  *) echo "usage: scripts/slurm-local.sh install|up|down|status" >&2; exit 2 ;;
esac
