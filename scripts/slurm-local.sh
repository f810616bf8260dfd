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
#   scripts/slurm-local.sh owned     whether the cluster answering is the one `up` started here (below)
#
# `up` leaves a marker, $state/owner (world-readable): a random token, also written into the
# slurm.conf it generates, the cluster's name, its partition and slurmctld's pid. `owned` accepts the
# cluster that answers only when all of them match what runs (scontrol show config: ClusterName,
# SLURM_CONF holding the token, the pid file naming the marker's live slurmctld). The test suite
# (test/helpers/slurm.ts) and .ci/run ask `owned` before touching a cluster: they never submit to a
# cluster someone else runs (a developer's, or an HPC login node's production one).
#   exit 0: ours; prints cluster=, partition=, token=
#   exit 3: another cluster answers; prints why, naming it; never replaced or stopped by this script
#   exit 4: no cluster answers (or ours is not up); prints why
set -euo pipefail

state="${LMB_SLURM_STATE:-/var/lib/lmb-slurm}"
conf=/etc/slurm/slurm.conf
marker='# lm-bench local test cluster (scripts/slurm-local.sh)'
owner="$state/owner"
partition=gpu
node="$(hostname -s)"

need_root() {
  if [ "$(id -u)" != 0 ]; then echo "slurm-local: must run as root (it starts munged, slurmctld and slurmd)" >&2; exit 2; fi
}

# What `scontrol show config` says of KEY (e.g. ClusterName), from its output in $1.
config_value() {
  printf '%s\n' "$1" | awk -v k="$2" '$1 == k { sub(/^[^=]*= */, ""); print; exit }'
}

owned() {
  local cfg name conf_file pidfile pid token m_cluster m_pid m_partition parts
  if ! cfg="$(timeout 10 scontrol show config 2>/dev/null)" || [ -z "$cfg" ]; then
    if [ -r "$owner" ]; then echo "the cluster scripts/slurm-local.sh started (marker $owner) does not answer"; else echo "no Slurm cluster answers on this machine"; fi
    return 4
  fi
  name="$(config_value "$cfg" ClusterName)"
  conf_file="$(config_value "$cfg" SLURM_CONF)"
  pidfile="$(config_value "$cfg" SlurmctldPidFile)"
  parts="$( (timeout 10 sinfo -h -o %P 2>/dev/null || true) | tr '\n' ' ' | sed 's/ *$//')"
  local foreign="a Slurm cluster not started by scripts/slurm-local.sh answers here (ClusterName=${name:-?}, partitions: ${parts:-?}, config ${conf_file:-?})"
  if [ ! -r "$owner" ]; then echo "$foreign: no marker $owner"; return 3; fi
  token="$(awk -F= '$1 == "token" { print $2 }' "$owner")"
  m_cluster="$(awk -F= '$1 == "cluster" { print $2 }' "$owner")"
  m_pid="$(awk -F= '$1 == "slurmctld_pid" { print $2 }' "$owner")"
  m_partition="$(awk -F= '$1 == "partition" { print $2 }' "$owner")"
  if [ -z "$token" ] || [ "$name" != "$m_cluster" ]; then echo "$foreign: the marker names cluster ${m_cluster:-?}"; return 3; fi
  if [ -z "$conf_file" ] || ! grep -qxF "# lmb-local-token: $token" "$conf_file" 2>/dev/null; then echo "$foreign: its slurm.conf does not hold the marker's token"; return 3; fi
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if [ -z "$m_pid" ] || [ "$pid" != "$m_pid" ] || [ "$(cat "/proc/$m_pid/comm" 2>/dev/null)" != slurmctld ]; then
    echo "$foreign: slurmctld ${pid:-?} is not the marker's ($m_pid, $( [ -d "/proc/$m_pid" ] && echo alive || echo gone))"
    return 3
  fi
  if ! timeout 10 sinfo -h -N -o %T 2>/dev/null | grep -Eq '^(idle|mixed|allocated|completing)'; then
    echo "the cluster scripts/slurm-local.sh started ($name) has no node up: $( (timeout 10 sinfo -h -N -o %T 2>/dev/null || true) | tr '\n' ' ')"
    return 4
  fi
  echo "cluster=$name"
  echo "partition=$m_partition"
  echo "token=$token"
}

write_config() {
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    echo "slurm-local: $conf exists and was not written by this script; refusing to replace it" >&2
    exit 2
  fi
  token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  mkdir -p /etc/slurm "$state/ctld" "$state/spool" "$state/log" "$state/gpus" /run/lmb-slurm
  for i in 0 1 2 3; do : > "$state/gpus/gpu$i"; done
  # CPUs are over-declared (config_overrides) so that GPUs, not this machine's two cores, decide
  # how many jobs run at once; memory is not a consumable resource (CR_Core).
  cat > "$conf" <<EOF
$marker
# lmb-local-token: $token
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
PartitionName=$partition Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  cat > /etc/slurm/gres.conf <<EOF
$marker
NodeName=$node Name=gpu File=$state/gpus/gpu[0-3]
EOF
}

start_munge() {
  if pgrep -x munged >/dev/null; then return; fi
  : > "$state/munged.ours"
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
  # Another cluster here (a developer's, a login node's production one) is never reconfigured: only
  # a slurmctld reading a config this script wrote, or none at all, is ours to (re)start.
  local why rc=0
  why="$(owned)" || rc=$?
  if [ "$rc" = 3 ]; then
    local in_use
    in_use="$(config_value "$(timeout 10 scontrol show config 2>/dev/null)" SLURM_CONF)"
    if [ -z "$in_use" ] || ! grep -qF "$marker" "$in_use" 2>/dev/null; then
      echo "slurm-local: $why; refusing to touch it" >&2
      exit 3
    fi
  fi
  if [ "$rc" != 0 ] && pgrep -x slurmctld >/dev/null && [ ! -f /run/lmb-slurm/slurmctld.pid ]; then
    echo "slurm-local: a slurmctld not started by this script runs here (pid $(pgrep -x slurmctld | tr '\n' ' ')); refusing to touch it" >&2
    exit 3
  fi
  mkdir -p "$state"
  write_config
  start_munge
  # -c: a test cluster starts with an empty queue (jobs saved by an earlier run are dropped).
  pgrep -x slurmctld >/dev/null || slurmctld -c
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 1 60); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
      # The marker last, once the cluster answers: its token is the one in the config slurmctld reads.
      umask 022
      printf 'token=%s\ncluster=lmb-local\npartition=%s\nslurmctld_pid=%s\nconf=%s\n' "$token" "$partition" "$(cat /run/lmb-slurm/slurmctld.pid)" "$conf" > "$owner.tmp"
      mv "$owner.tmp" "$owner"
      echo "slurm-local: up ($node, partition $partition, 4 placeholder GPUs; logs in $state/log; marker $owner)"
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

# Stops a daemon by the pid its pid file names, only if that pid is the daemon (never by name: another cluster's daemons may run here).
stop_pid() {
  local pidfile="$1" comm="$2" pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do [ -d "/proc/$pid" ] || return 0; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
}

down() {
  need_root
  local why rc=0
  why="$(owned)" || rc=$?
  if [ "$rc" = 3 ]; then echo "slurm-local: $why; not stopping it" >&2; exit 3; fi
  rm -f "$owner"
  stop_pid /run/lmb-slurm/slurmd.pid slurmd
  stop_pid /run/lmb-slurm/slurmctld.pid slurmctld
  if [ -f "$state/munged.ours" ]; then stop_pid /run/munge/munged.pid munged; rm -f "$state/munged.ours"; fi
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
  owned) owned ;;
  *) echo "usage: scripts/slurm-local.sh install|up|down|status|owned" >&2; exit 2 ;;
esac
