"""Glue for ``workflow/scripts``: log to the rule's log file and call one package function."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .errors import KgevalError, one_line
from .io import workflow_job

# fontTools logs a line per font table it subsets whenever matplotlib writes a PDF
QUIET_LOGGERS = ("fontTools", "matplotlib", "PIL", "numba", "h5py")


def setup_logging(log_file: str | None = None, level: int = logging.INFO, verbose: bool = False) -> None:
    """Log to stderr (and ``log_file``); third-party libraries' INFO lines only when ``verbose``."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        os.makedirs(os.path.dirname(log_file) or ".", exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        handlers=handlers, force=True)
    logging.captureWarnings(True)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)


def run_step(snakemake: Any, func: Callable[..., Any], **kwargs: Any) -> Any:
    """Run ``func(**kwargs)`` with logging to ``snakemake.log[0]``. A kgeval error (bad input) ends the job with
    the one line ``kgeval: error: <file>[:<line>]: <problem>`` in the log and on stderr and exit status 2; any
    other exception is logged with its traceback and re-raised."""
    log_file = snakemake.log[0] if len(snakemake.log) else None
    setup_logging(log_file)
    threads = getattr(snakemake, "threads", None)
    if threads:
        set_torch_threads(int(threads))
    log = logging.getLogger("kgeval.workflow")
    log.info("rule %s: %s", getattr(snakemake, "rule", "?"), func.__qualname__)
    start = time.perf_counter()
    try:
        with workflow_job():  # the job's inputs are the workflow's own: a corrupted dump may be set aside
            result = func(**kwargs)
    except KgevalError as exc:
        # bad input that kgeval reports on purpose (a run file's line, a config key): one line, as on the command
        # line, in the job's log and on stderr (which Snakemake shows above its error summary), and no traceback
        error_line(f"kgeval: error: {one_line(exc)}")
        raise SystemExit(2) from None
    except Exception:
        log.exception("rule %s failed", getattr(snakemake, "rule", "?"))
        raise
    log.info("done in %.1f s", time.perf_counter() - start)
    return result


def set_torch_threads(threads: int) -> None:
    """``torch.set_num_threads(threads)`` for this job, without importing torch: the import costs 2-3 s, paid by
    every job of a run (hundreds in the tiny workflow) while most of them never use torch. A torch already imported
    is set now; otherwise the call runs right after torch's first import (OMP_NUM_THREADS would not do: torch caps
    it at the physical cores, set_num_threads does not)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    elif not any(isinstance(f, _ThreadsOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _ThreadsOnImport(threads))


class _ThreadsOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the first import of torch it runs the real loader, then sets the threads."""

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once, and so that the lookup below finds the real spec
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module
        threads = self.threads

        def exec_module(module: Any) -> None:
            load(module)
            module.set_num_threads(threads)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader object
        return spec


def error_line(line: str) -> None:
    """Write ``line`` as it is (without the log format's time and level) to every handler of the root logger:
    the job's log file and stderr."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    for h in handlers:
        h.acquire()
        try:
            h.flush()
            h.stream.write(line + "\n")
            h.flush()
        finally:
            h.release()
    if not handlers:
        print(line, file=sys.stderr)


# seconds after a forwarded interrupt before a job that is still alive gets SIGTERM, and then SIGKILL
STOP_GRACE = (4.0, 7.0)


def forward_stop_signals(grace: tuple[float, float] = STOP_GRACE) -> None:
    """Make SIGINT and SIGTERM of this (Snakemake's main) process stop its running jobs within seconds.

    Snakemake runs each job as a child process and, on a KeyboardInterrupt or SIGTERM of its own process, waits
    for the running jobs to end ("Terminating processes on user request" / "Will exit after finishing
    currently running jobs"); only a Ctrl-C in a terminal, which signals the whole process group, reached the
    jobs. A ``kill -INT``/``-TERM`` of Snakemake, or a Ctrl-C of a wrapper that started it in its own session,
    left trainings running for minutes. This handler passes SIGINT on to every descendant process (a Python job
    unwinds with KeyboardInterrupt, its atomic writes removing their temporary files), sends SIGTERM to those
    still alive after ``grace[0]`` seconds and SIGKILL after ``grace[1]``, and then calls the previous handler,
    so Snakemake stops as before: it records the jobs as failed, and their work checkpoints (written atomically
    at every epoch) are there for ``--rerun-incomplete``. Installed from ``onstart`` (after Snakemake's own
    SIGTERM handler); a signal that was ignored stays ignored (``nohup``).
    """
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        if previous is signal.SIG_IGN or getattr(previous, "_kgeval_forwards", False):
            continue

        def handler(sig: int, frame: Any, previous: Any = previous) -> None:
            stop_children(grace)
            if callable(previous):
                previous(sig, frame)
            else:  # SIG_DFL (None: set outside Python): the default action, as if no handler were here
                signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)

        handler._kgeval_forwards = True  # type: ignore[attr-defined]
        signal.signal(signum, handler)


def stop_children(grace: tuple[float, float] = STOP_GRACE) -> list[int]:
    """SIGINT to every descendant process now, SIGTERM after ``grace[0]`` s, SIGKILL after ``grace[1]`` s to
    those still alive (from a daemon thread: the caller returns at once). Returns the signalled pids."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.send_signal(signal.SIGINT)

    def escalate() -> None:
        start = time.monotonic()
        for delay, sig in zip(grace, (signal.SIGTERM, signal.SIGKILL)):
            alive = [c for c in children if _alive(c)]
            if not alive:
                return
            time.sleep(max(0.0, start + delay - time.monotonic()))
            for c in alive:
                with contextlib.suppress(psutil.Error):
                    if _alive(c):
                        c.send_signal(sig)

    if children:
        threading.Thread(target=escalate, name="kgeval-stop-jobs", daemon=True).start()
    return [c.pid for c in children]


def _alive(proc: Any) -> bool:
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
