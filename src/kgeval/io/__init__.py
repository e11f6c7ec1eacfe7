"""File input and output, one job per module:

* :mod:`~kgeval.io.atomic`: one file written atomically, read, checksummed, or set aside when it fails its check;
* :mod:`~kgeval.io.stage`: a command's outputs moved into place together (:class:`OutputStage`), with
  :mod:`~kgeval.io.commit` (all of them or none) and :mod:`~kgeval.io.lock` (one command per output folder);
* :mod:`~kgeval.io.signals`: stop signals held while a set of renames runs;
* :mod:`~kgeval.io.render`: tables as Markdown and LaTeX;
* :mod:`~kgeval.io.paths`: path predicates;
* :mod:`~kgeval.io.pause`: the fault-tolerance test's hook.

The names below are re-exported so that ``from kgeval.io import X`` works for each of them.
"""

from .atomic import (
    atomic_open,
    atomic_path,
    in_workflow_job,
    read_json,
    set_aside,
    sha256_file,
    workflow_job,
    write_csv,
    write_json,
)
from .commit import CommitIncomplete, replace_together
from .lock import OutputLocked
from .paths import current_umask, is_within, require_inputs, same_path, sidecar
from .pause import PAUSE_ENV, pause_point
from .render import latex_escape, md_cell, to_latex, to_markdown, write_table
from .signals import deferred_stop_signals
from .stage import MANIFEST, STAGING, TRASH, OutputStage

__all__ = [
    "MANIFEST", "PAUSE_ENV", "STAGING", "TRASH", "CommitIncomplete", "OutputLocked", "OutputStage", "atomic_open",
    "atomic_path", "current_umask", "deferred_stop_signals", "in_workflow_job", "is_within", "latex_escape", "md_cell", "pause_point",
    "read_json", "replace_together", "require_inputs", "same_path", "set_aside", "sha256_file", "sidecar", "to_latex",
    "to_markdown", "workflow_job", "write_csv", "write_json", "write_table",
]
