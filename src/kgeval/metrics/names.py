"""How a measure name is read: the one parser of ``Name@k`` and the one table of names and synonyms.

The API's measures, the config's trec measures and the bounds stage's metrics all go through these two:

* :func:`split` cuts a name into its name part and its cutoff: ``Hits@10`` → (``Hits``, 10), ``ndcg_cut_20`` →
  (``ndcg_cut``, 20), ``MRR`` → (``MRR``, None). A cutoff is a positive integer; anything else after ``@``
  (``@0``, ``@-1``, ``@x``, nothing) is refused with a :class:`~kgeval.errors.MeasureError`.
* :class:`Lookup` finds a declaration by its name part the way PyKEEN's class resolver does
  (``class_resolver.normalize_string``): case, ``-``, ``_`` and spaces do not matter, so ``z-MRR``, ``zmrr`` and
  ``ZMRR`` are one name. A declaration registers its key, its label and its synonyms; two declarations may not
  share a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Generic, TypeVar

from ..errors import MeasureError

T = TypeVar("T")
_UNDERSCORE_CUTOFF = re.compile(r"^(?P<base>.+?)_(?P<k>\d+)$")  # trec_eval's form: P_10, ndcg_cut_20


def normalize(name: str) -> str:
    """The form names are compared in: lower case, without ``-``, ``_`` and white space."""
    return re.sub(r"[-_\s]", "", name).lower()


def split(name: str) -> tuple[str, int | None]:
    """(name part, cutoff or None) of ``Name@k`` or trec_eval's ``name_k``; a cutoff that is not a positive
    integer raises :class:`~kgeval.errors.MeasureError`."""
    if "@" in name:
        base, _, text = name.rpartition("@")
        if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
            raise MeasureError(name, f"the cutoff {text!r} is not a positive integer (write {base}@10, say)")
        return base, int(text)
    m = _UNDERSCORE_CUTOFF.match(name)
    if m:
        if int(m["k"]) < 1:
            raise MeasureError(name, f"the cutoff {m['k']!r} is not a positive integer")
        return m["base"], int(m["k"])
    return name, None


def cutoffs_text(allowed: Iterable[int]) -> str:
    """``1, 3, 10`` or ``1–10`` for a run of consecutive cutoffs."""
    ks = sorted(set(allowed))
    if len(ks) > 2 and ks == list(range(ks[0], ks[-1] + 1)):
        return f"{ks[0]}–{ks[-1]}"
    return ", ".join(map(str, ks))


class Lookup(Generic[T]):
    """Normalised name → declaration. ``names`` keeps each declaration's first name, for error messages."""

    def __init__(self, what: str):
        self.what = what
        self._by: dict[str, T] = {}
        self.names: list[str] = []

    def register(self, entry: T, names: Iterable[str]) -> None:
        names = [n for n in names if n]
        self.names.append(names[0])
        for n in names:
            key = normalize(n)
            if self._by.setdefault(key, entry) is not entry:
                raise ValueError(f"{self.what} name {n!r} is declared twice")

    def get(self, name: str) -> T | None:
        return self._by.get(normalize(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize(name) in self._by
