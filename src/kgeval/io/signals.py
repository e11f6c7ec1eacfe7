"""Holding the stop signals while a set of renames runs, so that the set completes (or rolls back) as one."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def deferred_stop_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then act on the first one that came (with the handler that
    was in place): a set of renames inside runs to its end under a stop signal, so that a checkpoint and its
    sidecar are replaced together or not at all. Python runs signal handlers in the main thread only, so
    elsewhere this is a no-op; SIGKILL cannot be held (the load-time checks catch a pair it splits, and an output
    folder's next command puts back what a killed commit had set aside)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])
