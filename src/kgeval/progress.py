"""Progress of long loops: plain log lines on a clock, or a tqdm bar on a terminal.

A training, a score dump or a download can run for many minutes with nothing else to show, so its loop reports
how far it is. In a workflow job (stderr and the rule's log file) that is one log line at least every
``interval`` seconds, chosen by time and not by count so that slow and fast loops alike report about twice a
minute and a log file stays short. The command line (``kgeval.cli``) turns bars on: when stderr is a terminal the
same loop then draws a tqdm bar instead, and log records are routed around it.

The helper only counts and reads a clock; it never touches the loop's data, so no computed result depends on it.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any, TextIO

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 30.0  # seconds; with one loop step well under 30 s a line comes at least once a minute

_bars_enabled = False


def enable_bars(enabled: bool = True) -> None:
    """Let :class:`Progress` draw bars on a terminal (the command line does; workflow jobs log lines)."""
    global _bars_enabled
    _bars_enabled = enabled


def format_seconds(seconds: float) -> str:
    """``h:mm:ss`` (``m:ss`` under an hour)."""
    s = int(round(max(seconds, 0.0)))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _format_count(n: float, unit: str) -> str:
    if unit == "B":
        return f"{n / 2**20:.1f} MiB"
    return f"{int(n):,}"


def _format_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream is no terminal
        return False


class Progress:
    """Count ``update(n)`` calls towards ``total`` and report: a log line every ``interval`` seconds (and one
    at ``close``), or a tqdm bar when bars are enabled and ``stream`` is a terminal.

    ``initial`` counts work done before this process started (a resumed training): it is shown in the count
    but left out of the rate, so the estimated time left is ``(total - done) / rate`` with ``rate`` the work
    done here per elapsed second. ``fields`` given to :meth:`update` (loss, epoch …) are shown after the
    counts. ``clock`` is injectable for tests.
    """

    def __init__(self, total: int | None, desc: str, unit: str = "it", interval: float = DEFAULT_INTERVAL,
                 logger: logging.Logger | None = None, initial: int = 0,
                 clock: Callable[[], float] = time.monotonic, stream: TextIO | None = None,
                 bar: bool | None = None):
        self.total, self.desc, self.unit, self.interval = total, desc, unit, interval
        self.logger = logger or log
        self.clock = clock
        self.initial = self.done = initial
        self.fields: dict[str, Any] = {}
        self.start = self._last = clock()
        self.lines: list[str] = []  # every line emitted, for the caller (and tests) to inspect
        self._closed = False
        self._bar = None
        self._stack = ExitStack()
        stream = sys.stderr if stream is None else stream
        if (_bars_enabled if bar is None else bar) and _isatty(stream):
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            self._bar = self._stack.enter_context(
                tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream, dynamic_ncols=True,
                     unit_scale=unit == "B", unit_divisor=1024 if unit == "B" else 1000))
            # log records written through tqdm so that they do not tear the bar
            self._stack.enter_context(logging_redirect_tqdm())

    @property
    def is_bar(self) -> bool:
        return self._bar is not None

    def elapsed(self, now: float | None = None) -> float:
        return (self.clock() if now is None else now) - self.start

    def eta(self, now: float | None = None) -> float | None:
        """Seconds left at the rate so far; None before any work or without a total."""
        elapsed = self.elapsed(now)
        done_here = self.done - self.initial
        if self.total is None or done_here <= 0 or elapsed <= 0:
            return None
        return max(self.total - self.done, 0) * elapsed / done_here

    def line(self, now: float | None = None) -> str:
        now = self.clock() if now is None else now
        count = _format_count(self.done, self.unit)
        if self.total is not None:
            pct = 100.0 * self.done / self.total if self.total else 100.0
            count += f"/{_format_count(self.total, self.unit)} {self.unit if self.unit != 'B' else ''}".rstrip()
            count += f" ({pct:.1f} %)"
        elif self.unit != "B":
            count += f" {self.unit}"
        eta = self.eta(now)
        parts = [f"{self.desc}: {count}", f"elapsed {format_seconds(self.elapsed(now))}",
                 f"left {'?' if eta is None else format_seconds(eta)}"]
        parts += [f"{k} {_format_value(v)}" for k, v in self.fields.items()]
        return ", ".join(parts)

    def _emit(self, now: float) -> None:
        text = self.line(now)
        self.lines.append(text)
        self.logger.info("%s", text)
        self._last = now

    def update(self, n: int = 1, **fields: Any) -> None:
        self.done += n
        if fields:
            self.fields.update(fields)
        if self._bar is not None:
            if fields:
                self._bar.set_postfix({k: _format_value(v) for k, v in self.fields.items()}, refresh=False)
            self._bar.update(n)
            return
        now = self.clock()
        if now - self._last >= self.interval:
            self._emit(now)

    def write(self, text: str, file: TextIO | None = None) -> None:
        """Print a line (to stdout by default) without tearing the bar."""
        file = sys.stdout if file is None else file
        if self._bar is not None:
            self._bar.write(text, file=file)
        else:
            print(text, file=file)

    def close(self) -> None:
        """The final line (or the finished bar); called once by ``with``."""
        if self._closed:
            return
        self._closed = True
        if self._bar is None:
            self._emit(self.clock())
        self._stack.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Heartbeat(logging.Handler):
    """A line every ``interval`` seconds while a long command or benchmark is otherwise quiet (issue 52: the
    popularity path printed nothing for 5 minutes, ``benchmarks/sampling.py`` for 7). It listens to every log
    record: any line (a :class:`Progress` line included) resets its clock, so it speaks only into a silence, and
    says what ran last. A daemon thread calls :meth:`tick`; tests call it with their own ``clock``."""

    def __init__(self, what: str, interval: float = DEFAULT_INTERVAL, logger: logging.Logger | None = None,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(level=logging.DEBUG)
        self.what, self.interval, self.clock = what, interval, clock
        self.logger = logger or log
        self.start = self._last = clock()
        self._last_message = ""
        self.lines: list[str] = []
        self._stop = None
        self._speaking = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._speaking:
            return  # its own line does not count as the work speaking
        self._last = self.clock()
        self._last_message = record.getMessage().splitlines()[0][:120] if record.getMessage() else ""

    def tick(self) -> str | None:
        """Log (and return) a line if nothing was logged for ``interval`` seconds, else None."""
        root = logging.getLogger()
        if self._stop is not None and self not in root.handlers:
            root.addHandler(self)  # a logging set-up after ours (basicConfig(force=True)) took it off
        now = self.clock()
        if now - self._last < self.interval:
            return None
        text = f"{self.what}: working, elapsed {format_seconds(now - self.start)}"
        text += f" (last: {self._last_message})" if self._last_message else ""
        self.lines.append(text)
        self._speaking = True
        try:
            self.logger.info("%s", text)
        finally:
            self._speaking = False
        self._last = now
        return text

    def __enter__(self) -> Heartbeat:
        import threading

        logging.getLogger().addHandler(self)
        self._stop = threading.Event()

        def beat() -> None:
            while not self._stop.wait(min(self.interval, 5.0)):
                self.tick()

        threading.Thread(target=beat, name="kgeval-heartbeat", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._stop.set()
        logging.getLogger().removeHandler(self)
