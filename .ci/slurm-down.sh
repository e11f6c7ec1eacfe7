#!/usr/bin/env bash
# Stop the test cluster that .ci/slurm-up.sh started: cancel its jobs, then stop slurmd, slurmctld and munged by
# the pid files they wrote (never by process name: other SLURM or munge processes on the machine are not ours).
# Safe to call when nothing runs. Environment: SLURM_DOWN_TIMEOUT, seconds to wait for each daemon (default 30).
set -uo pipefail

TIMEOUT="${SLURM_DOWN_TIMEOUT:-30}"
RUNDIR=/run/slurm

say() { echo "slurm-down: $*"; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() { # stop NAME PIDFILE: SIGTERM, wait, then SIGKILL
  local name=$1 pidfile=$2 pid start
  if ! alive "$pidfile"; then
    rm -f "$pidfile"
    return 0
  fi
  pid="$(cat "$pidfile")"
  say "stopping ${name} (pid ${pid})"
  kill -TERM "$pid" 2>/dev/null || true
  start=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - start >= TIMEOUT)); then
      say "${name} (pid ${pid}) still alive after ${TIMEOUT}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.5
  done
  rm -f "$pidfile"
}

# Jobs first, while slurmctld and slurmd still run: a job's processes (slurmstepd and its children) outlive
# slurmd, so cancel them through SLURM and wait for the queue to drain.
if alive "${RUNDIR}/slurmctld.pid" && command -v squeue >/dev/null 2>&1; then
  jobs="$(timeout 10 squeue -h -t PENDING,RUNNING,SUSPENDED,COMPLETING -o %i 2>/dev/null | tr '\n' ' ')"
  if [ -n "${jobs// /}" ]; then
    say "cancelling jobs ${jobs}"
    # shellcheck disable=SC2086
    timeout 10 scancel $jobs || true
    start=$SECONDS
    while [ -n "$(timeout 10 squeue -h -t PENDING,RUNNING,SUSPENDED,COMPLETING -o %i 2>/dev/null)" ]; do
      if ((SECONDS - start >= TIMEOUT)); then
        say "jobs still listed after ${TIMEOUT}s; stopping the daemons anyway"
        break
      fi
      sleep 1
    done
  fi
fi

stop slurmd "${RUNDIR}/slurmd.pid"
stop slurmctld "${RUNDIR}/slurmctld.pid"
stop munged /run/munge/munged.pid
say "stopped"
