"""The environment every workflow job starts with, set in Snakemake's own process (the Snakefile calls
:func:`set_job_environment` while it is parsed), so that the jobs it starts inherit it: local jobs as its
children, SLURM jobs through ``sbatch --export=ALL``."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from . import numerics

# glibc's allocator: keep large freed blocks (torch's batch x entities score tensors) in the heap instead of
# unmapping them, which made every batch pay page faults again (docs/performance.md). glibc reads these once,
# when a process starts, so they must be in a job's environment before it starts, not set inside it.
ALLOCATOR = {"MALLOC_MMAP_THRESHOLD_": "1000000000000", "MALLOC_TRIM_THRESHOLD_": "1000000000000"}


def set_job_environment(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set :data:`ALLOCATOR` in ``environ`` (default ``os.environ``) where a variable is not set yet (a value the
    user set wins), and the numerical mode's variables (:mod:`kgeval.numerics`, as ``KGEVAL_NUMERICS`` names it:
    they win, unless ``native`` turns the mode off). Returns the variables this call set."""
    environ = os.environ if environ is None else environ
    added = {k: v for k, v in ALLOCATOR.items() if k not in environ}
    added.update({k: v for k, v in numerics.settings(environ.get(numerics.MODE_VAR)).items() if environ.get(k) != v})
    environ.update(added)
    return added
