"""The errors of reading LibKGE checkpoints."""

from __future__ import annotations

from ...errors import KgevalError
from ...io.unpickle import UnsafePickleError


class LibKGEError(KgevalError):
    """A LibKGE checkpoint that does not fit the knowledge graph or is not a supported model."""


class UnsafeCheckpointError(UnsafePickleError):
    """A pickle that references a global outside the allow-list (it could run code on load)."""
