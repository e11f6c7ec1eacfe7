"""Agreement between two annotators: Cohen's kappa and the items they disagree on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from .sheets import Judgment


def _as_binary(label) -> int:
    if label in (1, True, "Y"):
        return 1
    if label in (0, False, "N"):
        return 0
    raise ValueError(f"label {label!r} is not Y/N or 1/0")


def cohen_kappa(labels_a: Sequence, labels_b: Sequence) -> float:
    """Cohen's kappa of two raters' Y/N labels (``"Y"``/``"N"`` or 1/0) over the same items.

    With n items, observed agreement p_o = (1/n) * #{i : a_i = b_i}, and chance agreement from each rater's
    label shares p_e = p_a(Y) * p_b(Y) + p_a(N) * p_b(N),

        kappa = (p_o - p_e) / (1 - p_e).

    kappa is 1 for perfect agreement, 0 for agreement at chance level, negative below it. It is undefined
    (NaN is returned) when p_e = 1, i.e. both raters used one and the same label for every item.
    """
    a = [_as_binary(x) for x in labels_a]
    b = [_as_binary(x) for x in labels_b]
    if len(a) != len(b):
        raise ValueError(f"the raters labelled different numbers of items ({len(a)} and {len(b)})")
    if not a:
        raise ValueError("kappa needs at least one item")
    p_o, p_e = _agreement(a, b)
    if p_e == 1:
        return float("nan")
    return float((p_o - p_e) / (1 - p_e))


def _agreement(a: Sequence[int], b: Sequence[int]) -> tuple[Fraction, Fraction]:
    """Observed and chance agreement as exact fractions (so kappa of a hand-computable case is exact)."""
    n = len(a)
    p_o = Fraction(sum(x == y for x, y in zip(a, b)), n)
    ya, yb = Fraction(sum(a), n), Fraction(sum(b), n)
    return p_o, ya * yb + (1 - ya) * (1 - yb)


def disagreements(a: Mapping, b: Mapping) -> list:
    """The keys (items) whose labels differ between two raters' ``{item: label}`` maps, in ``a``'s order.

    Labels may be Y/N, 1/0 or ``Judgment`` objects. Both maps must cover the same items."""
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b), key=str)
        raise ValueError(f"the raters labelled different items: {only[:20]}")

    def lab(x):
        return x.label if isinstance(x, Judgment) else _as_binary(x)

    return [k for k in a if lab(a[k]) != lab(b[k])]


