"""A hook that holds a workflow job at a named point, for the fault-tolerance test.

It lives in the package, not in ``tests/``, because the points are inside the jobs' own code (a score dump before
its ``meta.json``, a training right after its work checkpoint): ``tests/fault_tolerance_e2e.py`` runs the real
workflow in a subprocess and can reach those places only through the environment. Unset (always, outside that
test), :func:`pause_point` returns at once.
"""

from __future__ import annotations

import os
import sys
import time

PAUSE_ENV = "KGEVAL_PAUSE_AT"


def pause_point(name: str) -> None:
    """Sleep here when ``$KGEVAL_PAUSE_AT`` names this point (``name=seconds[,name=seconds...]``).

    Only the fault-tolerance test (tests/fault_tolerance_e2e.py) sets the variable: it holds a step where a kill
    leaves partial output (a dump folder without meta.json, a training run with only its work checkpoint), so the
    test's SIGKILL lands there every time instead of racing a window of a few milliseconds.
    """
    spec = os.environ.get(PAUSE_ENV, "").strip()
    if not spec:
        return
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not sep or not key.strip() or not seconds >= 0:
            raise ValueError(f"${PAUSE_ENV}={spec!r}: {item!r} is not name=seconds (seconds >= 0)")
        if key.strip() == name:
            # said on stderr, so that a test kills the process once it is here rather than after a guessed delay
            print(f"kgeval: paused at {name} (process {os.getpid()})", file=sys.stderr, flush=True)
            time.sleep(seconds)


def kill_at(args: list, point: str | None, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    """Run ``python -m kgeval.cli ARGS``; with ``point``, hold it there (``$KGEVAL_PAUSE_AT``) and SIGKILL it.

    For the kill tests and the promise probe: returns ``(None, "")`` once the process was killed at the point,
    else its exit status and the tail of its stderr (it ended without reaching the point, or ``point`` is None).
    """
    import signal
    import subprocess

    env = dict(os.environ if env is None else env)
    env.pop(PAUSE_ENV, None)
    if point is not None:
        env[PAUSE_ENV] = f"{point}=600"
    proc = subprocess.Popen([sys.executable, "-m", "kgeval.cli", *map(str, args)], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if point is None:
        err = proc.communicate()[1]
        return proc.returncode, err[-2000:]
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if f"paused at {point}" in line:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return None, ""
    return proc.wait(), "".join(seen)[-2000:]
