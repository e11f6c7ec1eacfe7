"""Your own graph and models at scale: a real graph's downloaded files (:mod:`.readers`) written as the graph file
the scale steps read, and trained embeddings (one .npz per model) as block scorers, checked against the graph.

A graph file from real files holds ``train``/``valid``/``test`` triples, ``num_entities``, ``num_relations``, the
``layout`` it was read from and, where the files name them, ``entities``/``relations`` (the id strings, row i
the name of id i) and ``test_head_neg``/``test_tail_neg`` (OGB's fixed negatives, a row per test triple: the
sampled-negatives protocol then ranks against them, :mod:`.negatives`). It has no planted vectors and no hidden share: its systems are the user's models, and pools
(judged by a planted truth) are not made for it.

A model file (``np.savez``) holds ``model`` (one of :data:`MODELS`), ``entity`` (E, d) and ``relation`` (R, d)
rows in the graph's id order, ComplEx's as a complex array or real halves then imaginary halves, TransE's norm
``p`` (1 unless given). With ``entity_names``/``relation_names`` (the names of its rows, in any order and possibly
more of them) its rows are put in the graph's order by name instead, for models trained with their own ids.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CorruptFileError, KgevalError
from .readers import SPLITS, layout_inputs, read_wikidata5m, read_wikikg2
from .store import SYNTHETIC, check_ids, load_arrays, members, save_arrays

#: the layouts ``kgeval scale graph --from`` reads
LAYOUTS = ("wikikg2", "wikidata5m")
#: the models a model file can name (their block scorers: :func:`load_system`; torch is imported there, so that
#: reading a real graph's files does not pay for it)
MODELS = ("distmult", "complex", "transe")
_REAL = ("train", "valid", "test", "num_entities", "num_relations")
#: OGB's fixed negatives of the test triples, kept in a graph file read from ogbl-wikikg2's folder
NEGATIVES = ("test_head_neg", "test_tail_neg")


def layout_files(layout: str, root: str | Path, prefix: str = "wikidata5m_transductive") -> list[Path]:
    """The files of ``layout`` under ``root`` that exist (an output may go beside them, never over them)."""
    return [f for f in layout_inputs(layout, root, prefix) if f.exists()]


def real_graph_step(layout: str, root: str | Path, out: str | Path, prefix: str = "wikidata5m_transductive") -> dict:
    """Read ``layout``'s files under ``root`` into the graph file ``out``; its counts, for the caller to show."""
    if layout == "wikikg2":
        g = read_wikikg2(root)
    elif layout == "wikidata5m":
        g = read_wikidata5m(root, prefix)
    else:
        raise KgevalError(f"scale graph --from: unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    E, R = g["num_entities"], g["num_relations"]
    if not len(g["test"]):
        raise KgevalError(f"{root}: the test split holds no triple: nothing to evaluate")
    dtype = np.int32 if max(E, R) < 2**31 else np.int64
    arrays = {s: g[s].astype(dtype) for s in SPLITS}
    arrays |= {"num_entities": np.array(E, np.int64), "num_relations": np.array(R, np.int64),
               "layout": np.array(layout)}
    for key in ("entities", "relations"):
        if key in g:
            arrays[key] = np.array(g[key], dtype=str)
    # OGB's fixed negatives of the test triples: its protocol's sampled ranking uses exactly these (valid's are
    # not evaluated, so not kept: 0.9 GB at full size)
    for key in NEGATIVES:
        if key in g:
            arrays[key] = g[key].astype(dtype)
    save_arrays(out, arrays)
    return {"entities": E, "relations": R} | {s: len(g[s]) for s in SPLITS}


def open_graph(path: str | Path) -> tuple[dict[str, np.ndarray], int, int]:
    """A graph file's triples (and a synthetic graph's planted arrays), its entity and relation counts; every
    id checked against the counts (:func:`.store.check_ids`)."""
    if "num_entities" in members(path):
        g = load_arrays(path, _REAL)
        E, R = (_count(path, key, g[key]) for key in ("num_entities", "num_relations"))
    else:
        g = load_arrays(path, SYNTHETIC, optional=("seed",))  # the seed of its planted systems
        E, R = len(g["z"]), len(g["w"])
    # triple keys are (h * R + r) * E + t in int64 (kgeval.data.kg.triple_keys)
    if E * E * max(R, 1) >= 2**63:
        raise CorruptFileError(path, f"{E:,} entities and {R:,} relations: more than kgeval's int64 triple keys hold")
    for split in ("train", "valid", "test", "hidden"):
        if split in g:
            check_ids(path, split, g[split], [E, R, E], ["entity", "relation", "entity"])
    return g, E, R


def _count(path: str | Path, key: str, a: np.ndarray) -> int:
    if a.shape != () or a.dtype.kind not in "iu" or int(a) < 1:
        raise CorruptFileError(path, f"array {key!r} is {a.tolist()!r}: expected a positive whole number")
    return int(a)


def has_truth(path: str | Path) -> bool:
    """Whether a graph file is synthetic: its planted truth judges pools."""
    return "hidden" in members(path)


def load_system(path: str | Path, graph: str | Path, num_entities: int, num_relations: int):
    """The block scorer of the model file ``path`` for the graph file ``graph`` (its counts given); a file that
    does not fit the graph is refused in one line naming it."""
    import torch

    from .scorers import BilinearBlocks, ComplExBlocks, TransEBlocks

    a = load_arrays(path, ("model", "entity", "relation"), optional=("p", "entity_names", "relation_names"))
    model = str(a["model"]).lower()
    if model not in MODELS:
        raise CorruptFileError(path, f"model {str(a['model'])!r}: kgeval scores {', '.join(MODELS)}")
    rows = []
    for key, n, what in (("entity", num_entities, "entities"), ("relation", num_relations, "relations")):
        x = a[key]
        if x.ndim != 2 or x.dtype.kind not in "fc":
            raise CorruptFileError(path, f"{key!r} is a {x.ndim}-d {x.dtype} array, expected (rows, dimension) "
                                         "floats")
        if x.dtype.kind == "c":  # ComplEx as complex numbers: real halves then imaginary halves
            x = np.concatenate([x.real, x.imag], 1)
        if f"{key}_names" in a:
            x = _by_name(x, a[f"{key}_names"], graph, what, path, key)
            if len(x) != n:  # the graph's names are a row per id
                raise CorruptFileError(graph, f"array {what!r} holds {len(x):,} names for the graph's {n:,} {what}")
        elif len(x) != n:
            raise CorruptFileError(path, f"{key!r} has {len(x):,} rows, the graph {graph} has {n:,} {what} (rows "
                                         f"are in the graph's id order, or named by '{key}_names')")
        if not np.isfinite(x).all():
            raise CorruptFileError(path, f"{key!r} holds NaN or infinite values")
        rows.append(torch.from_numpy(np.ascontiguousarray(x, np.float32)))
    if rows[0].shape[1] != rows[1].shape[1]:
        raise CorruptFileError(path, f"entity width {rows[0].shape[1]} differs from relation width "
                                     f"{rows[1].shape[1]}")
    if model == "complex" and rows[0].shape[1] % 2:
        raise CorruptFileError(path, f"ComplEx rows of odd width {rows[0].shape[1]}: store real halves then "
                                     "imaginary halves, or complex arrays")
    if model == "transe":
        p = float(a["p"]) if "p" in a else 1.0
        if not p >= 1 or not np.isfinite(p):
            raise CorruptFileError(path, f"TransE norm p = {p}: need a finite p >= 1")
        return TransEBlocks(*rows, p=p)
    return (BilinearBlocks if model == "distmult" else ComplExBlocks)(*rows)


def _by_name(x: np.ndarray, names: np.ndarray, graph: str | Path, what: str, path: str | Path,
             key: str) -> np.ndarray:
    """The rows of ``x`` (named ``names``) in the graph's order of ``what``."""
    ours = load_arrays(graph, (), optional=(what,)).get(what)
    if ours is None:
        raise CorruptFileError(path, f"names its {what} ('{key}_names'), but the graph {graph} has no names (a "
                                     "graph read from Wikidata5M's files, or ogbl-wikikg2's with its mapping/ "
                                     "folder, has them)")
    if names.shape != (len(x),):
        raise CorruptFileError(path, f"'{key}_names' holds {names.size:,} names for {len(x):,} rows of {key!r}")
    index = pd.Index(names.astype(str))
    if not index.is_unique:
        raise CorruptFileError(path, f"'{key}_names' names {str(index[index.duplicated()][0])!r} twice")
    pos = index.get_indexer(ours)
    lost = np.flatnonzero(pos < 0)
    if len(lost):
        raise CorruptFileError(path, f"{len(lost):,} of the graph's {len(ours):,} {what} have no row in "
                                     f"'{key}_names', the first {str(ours[lost[0]])!r}")
    return x[pos]
