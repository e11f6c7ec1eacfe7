"""Glue for ``workflow/scripts``: log to the rule's log file and call one package function."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

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
    """Run ``func(**kwargs)`` with logging to ``snakemake.log[0]``; exceptions are logged, then re-raised."""
    log_file = snakemake.log[0] if len(snakemake.log) else None
    setup_logging(log_file)
    threads = getattr(snakemake, "threads", None)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    log = logging.getLogger("kgeval.workflow")
    log.info("rule %s: %s", getattr(snakemake, "rule", "?"), func.__qualname__)
    start = time.perf_counter()
    try:
        result = func(**kwargs)
    except Exception:
        log.exception("rule %s failed", getattr(snakemake, "rule", "?"))
        raise
    log.info("done in %.1f s", time.perf_counter() - start)
    return result
