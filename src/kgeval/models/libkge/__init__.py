"""LibKGE's published checkpoints (the "download" path) as kgeval models.

LibKGE (Broscheit et al. 2020) published trained RESCAL, TransE, DistMult, ComplEx, ConvE and RotatE models for
FB15k-237 and WN18RR. One module per job:

* :mod:`.fetch`: :func:`fetch_libkge` downloads a file with the project's downloader semantics (pinned SHA-256,
  mirror fallback, nothing half-written left behind);
* :mod:`.unpickle`: :func:`read_libkge_checkpoint` checks the SHA-256, then unpickles those same bytes with an
  allow-list unpickler (a pickle can run code);
* :mod:`.ids`: LibKGE's entity and relation order, matched to the knowledge graph by id string;
* :mod:`.convert`: one conversion function per LibKGE model type (:data:`~.convert.CONVERTERS`),
  :func:`load_libkge`, :func:`libkge_model` and :func:`convert_checkpoint`.

How each LibKGE layout maps onto kgeval's models, and what could not be checked against the published files, is
in docs/dev/libkge.md.
"""

from .convert import LIBKGE_MODELS, RECIPROCAL_WRAPPERS, SOURCE, convert_checkpoint, libkge_model, load_libkge
from .errors import LibKGEError, UnsafeCheckpointError
from .fetch import default_mirror_path, fetch_libkge
from .ids import libkge_order, read_ids
from .unpickle import LibKGEConfig, read_libkge_checkpoint

__all__ = ["LIBKGE_MODELS", "RECIPROCAL_WRAPPERS", "SOURCE", "LibKGEConfig", "LibKGEError", "UnsafeCheckpointError",
           "convert_checkpoint", "default_mirror_path", "fetch_libkge", "libkge_model", "libkge_order", "load_libkge",
           "read_ids", "read_libkge_checkpoint"]
