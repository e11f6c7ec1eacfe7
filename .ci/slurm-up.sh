#!/usr/bin/env bash
# Bring up a real single-node SLURM cluster on this machine (Debian 12, root, no systemd), for the end-to-end
# test of the SLURM profile (tests/slurm_e2e.sh). See shared/specs/slurm-on-one-machine.md for the facts behind
# every choice here.
#
#   bash .ci/slurm-up.sh      # install slurm-wlm + munge if missing, start munged, slurmctld, slurmd
#   bash .ci/slurm-down.sh    # stop them again (by their pid files)
#
# The daemons are started by hand (there is no systemd; the package install prints "policy-rc.d denied
# execution of start"), with pid files under /run. The node is named after `hostname -s`, has every CPU of the
# machine and most of its memory; one partition "debug" (the profiles' slurm_partition). Accounting is off, so
# `sacct` does not work: the profiles use `slurm-status-command: squeue` (the trap in the spec).
#
# Environment (all optional):
#   SLURM_UP_TIMEOUT      seconds to wait for each daemon / for the node to become idle (default 60)
#   SLURM_UP_MEM_MB       RealMemory of the node in MB (default: MemTotal minus 1 GB headroom, at most 64000)
#   SLURM_UP_INSTALL      0 to fail instead of installing missing packages (default 1)
# It is idempotent: a cluster already up (live pid files, node idle) is left as it is.
set -euo pipefail

TIMEOUT="${SLURM_UP_TIMEOUT:-60}"
CONF=/etc/slurm/slurm.conf
LOGDIR=/var/log/slurm
RUNDIR=/run/slurm
NODE="$(hostname -s)"

say() { echo "slurm-up: $*"; }
die() {
  echo "slurm-up: ERROR: $*" >&2
  for f in "${LOGDIR}/slurmctld.log" "${LOGDIR}/slurmd.log" /var/log/munge/munged.log; do
    if [ -s "$f" ]; then
      echo "---- last lines of $f" >&2
      tail -n 25 "$f" >&2 || true
    fi
  done
  exit 1
}
alive() { # alive PIDFILE: the pid file exists and names a live process
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.5 s until it succeeds
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS - start >= limit)); then
      die "timed out after ${limit}s waiting for ${what}"
    fi
    sleep 0.5
  done
}

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and starts daemons)"

# ---- 1. packages
need=()
command -v slurmctld >/dev/null 2>&1 || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || need+=(munge)
if ((${#need[@]})); then
  [ "${SLURM_UP_INSTALL:-1}" = 1 ] || die "missing packages: ${need[*]} (SLURM_UP_INSTALL=0)"
  say "installing ${need[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get update -qq || die "apt-get update failed"
  # The postinst scripts try to start the services and print "policy-rc.d denied execution of start": expected.
  timeout 900 apt-get install -y -qq --no-install-recommends slurm-wlm munge >/tmp/slurm-up-apt.log 2>&1 ||
    { tail -n 30 /tmp/slurm-up-apt.log >&2; die "apt-get install ${need[*]} failed (log above)"; }
fi
for tool in slurmctld slurmd sinfo sbatch squeue scontrol munge unmunge; do
  command -v "$tool" >/dev/null 2>&1 || die "${tool} not found after installing slurm-wlm and munge"
done

# ---- 2. already up? (a second call is a no-op)
if alive "${RUNDIR}/slurmctld.pid" && alive "${RUNDIR}/slurmd.pid" && alive /run/munge/munged.pid &&
  [ "$(timeout 10 sinfo -h -o %T 2>/dev/null | head -n 1)" = idle ]; then
  say "cluster already up (node ${NODE} idle)"
  exit 0
fi

# ---- 3. munge (authentication between the SLURM daemons and commands)
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
  say "creating /etc/munge/munge.key"
  if command -v mungekey >/dev/null 2>&1; then
    mungekey -c -f -k /etc/munge/munge.key
  else
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  fi
fi
chown munge:munge /etc/munge/munge.key
chmod 600 /etc/munge/munge.key
if alive /run/munge/munged.pid; then
  say "munged already running (pid $(cat /run/munge/munged.pid))"
else
  rm -f /run/munge/munged.pid /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  say "starting munged"
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid ||
    die "munged did not start"
  wait_for "$TIMEOUT" "munged's pid file" alive /run/munge/munged.pid
fi
wait_for "$TIMEOUT" "a working munge (munge -n | unmunge)" bash -c 'munge -n | unmunge'

# ---- 4. slurm.conf: one node named after this host, every CPU, most of the memory
cpus="$(nproc)"
if [ -n "${SLURM_UP_MEM_MB:-}" ]; then
  mem_mb="$SLURM_UP_MEM_MB"
else
  total_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024))
  mem_mb=$((total_mb - 1024))
  ((mem_mb <= 64000)) || mem_mb=64000
  ((mem_mb >= 1000)) || die "only ${total_mb} MB of memory: too little for the test cluster"
fi
install -d -m 0755 /etc/slurm "$LOGDIR" "$RUNDIR" /var/spool/slurmctld /var/spool/slurmd
say "writing ${CONF} (node ${NODE}: CPUs=${cpus} RealMemory=${mem_mb})"
cat >"$CONF" <<EOF
# Written by kgeval's .ci/slurm-up.sh: a one-node test cluster (no cgroups, no accounting).
ClusterName=ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmctldPidFile=${RUNDIR}/slurmctld.pid
SlurmdPidFile=${RUNDIR}/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=${LOGDIR}/slurmctld.log
SlurmdLogFile=${LOGDIR}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
# cores only, memory not consumable (the node has no cgroups to enforce it anyway): with CR_Core_Memory every job
# step inside a group job asks for the whole allocation's memory (the slurm-jobstep plugin's srun passes no --mem),
# so the steps of a group job ran one at a time (measured: two 4 s steps took 8 s)
SelectTypeParameters=CR_Core
# the node is described by CPUs only: use the configured values, whatever the hardware's topology is
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# squeue must still show finished jobs when the plugin asks (>= 3 x slurm-init-seconds-before-status-checks)
MinJobAge=300
SlurmctldTimeout=60
SlurmdTimeout=120
InactiveLimit=0
KillWait=10
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem_mb} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

# ---- 5. the daemons
if alive "${RUNDIR}/slurmctld.pid"; then
  say "slurmctld already running (pid $(cat "${RUNDIR}/slurmctld.pid")): reconfiguring"
  scontrol reconfigure || die "scontrol reconfigure failed"
else
  rm -f "${RUNDIR}/slurmctld.pid"
  say "starting slurmctld"
  # -c: clean start (no jobs or node states left over from an earlier test cluster)
  slurmctld -c || die "slurmctld did not start"
  wait_for "$TIMEOUT" "slurmctld's pid file" alive "${RUNDIR}/slurmctld.pid"
fi
wait_for "$TIMEOUT" "slurmctld to answer (scontrol ping)" bash -c 'scontrol ping | grep -q UP'
if alive "${RUNDIR}/slurmd.pid"; then
  say "slurmd already running (pid $(cat "${RUNDIR}/slurmd.pid"))"
else
  rm -f "${RUNDIR}/slurmd.pid"
  say "starting slurmd"
  slurmd || die "slurmd did not start"
  wait_for "$TIMEOUT" "slurmd's pid file" alive "${RUNDIR}/slurmd.pid"
fi

# ---- 6. wait for the node
say "waiting up to ${TIMEOUT}s for node ${NODE} to become idle"
start=$SECONDS
while :; do
  state="$(timeout 10 sinfo -h -o %T 2>/dev/null | head -n 1 || true)"
  [ "$state" = idle ] && break
  case "$state" in
  drain* | down* | fail*)
    scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
    ;;
  esac
  if ((SECONDS - start >= TIMEOUT)); then
    sinfo -R >&2 || true
    die "node ${NODE} is '${state:-unknown}', not idle, after ${TIMEOUT}s"
  fi
  sleep 0.5
done
say "cluster up in $((SECONDS - start))s: $(sinfo -h -o '%P %D %T %c CPUs %m MB' | head -n 1)"
