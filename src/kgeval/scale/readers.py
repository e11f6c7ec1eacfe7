"""Readers of the real large graphs' layouts, into integer triples the block engine ranks.

* ogbl-wikikg2, as OGB's ``LinkPropPredDataset`` leaves it: ``<root>/split/time/{train,valid,test}.pt``, each a
  dict of numpy arrays ``head``, ``relation``, ``tail`` (valid/test also ``head_neg``/``tail_neg``: OGB's 500
  negatives per triple), and ``<root>/mapping/{nodeidx2entityid,reltype2relid}.csv.gz`` for names (``node
  idx,entity id`` and ``reltype,rel id``). Ids are already integers; where the mapping is there, it also gives
  the entity count (2,500,604: a trained model has a row for every entity, in a triple or not).
* Wikidata5M (transductive): ``wikidata5m_transductive_{train,valid,test}.txt``, tab-separated ``Q… P… Q…``;
  ids are mapped to integers in order of first appearance over train, valid, test (entities and relations apart).

The files are read as they are: nothing is renamed, moved or rewritten.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CorruptFileError, InputError, KgevalError
from ..io.unpickle import safe_load
from ..limits import check_memory, env_number, measure

SPLITS = ("train", "valid", "test")
#: ids a graph may have beyond those its split files name, at the least (:func:`_id_bound`)
_ID_SLACK = 1_000_000


def layout_paths(layout: str, root: str | Path, prefix: str = "wikidata5m_transductive") -> tuple[list, list]:
    """The files of ``layout`` under ``root``: those it needs and those read where present (the workflow's
    inputs; this module imports no torch, so the Snakefile may use it)."""
    root = Path(root)
    if layout == "wikikg2":
        return ([root / "split" / "time" / f"{s}.pt" for s in SPLITS],
                [root / "mapping" / f"{n}.csv.gz" for n in ("nodeidx2entityid", "reltype2relid")])
    return [root / f"{prefix}_{s}.txt" for s in SPLITS], []


def layout_inputs(layout: str, root: str | Path, prefix: str = "wikidata5m_transductive") -> list[Path]:
    """The files a read of ``layout`` under ``root`` uses: every required one (a missing one is the reader's,
    or Snakemake's, to name) and the optional ones present."""
    required, optional = layout_paths(layout, root, prefix)
    return required + [f for f in optional if f.exists()]


def read_wikikg2(root: str | Path) -> dict:
    """``train``/``valid``/``test`` (n, 3) int64 triples, ``num_entities``, ``num_relations`` and, where the
    files have them, ``test_head_neg``/``test_tail_neg`` (and valid's: OGB's fixed negatives, a row per triple,
    the test's checked against the entities)."""
    root = Path(root)
    out: dict = {}
    for split in SPLITS:
        path = root / "split" / "time" / f"{split}.pt"
        if not path.is_file():
            raise KgevalError(f"{path}: not found (an ogbl-wikikg2 folder has split/time/{split}.pt)")
        # OGB pickles dicts of numpy arrays, which torch's weights-only loader refuses; a pickle can run code, so
        # it is read through the allow-list of numpy arrays and plain containers, and nothing else
        d = safe_load(path, "an ogbl-wikikg2 split file (numpy arrays in a dict)")
        if not isinstance(d, dict):
            raise InputError(path, None, f"holds a {type(d).__name__}, expected a dict of head/relation/tail arrays")
        missing = [k for k in ("head", "relation", "tail") if k not in d]
        if missing:
            raise InputError(path, None, f"no {missing[0]!r} array (has {', '.join(map(str, d))})")
        cols = [np.asarray(d[k]).reshape(-1) for k in ("head", "relation", "tail")]
        if len({len(c) for c in cols}) > 1 or any(c.dtype.kind not in "iu" for c in cols):
            raise InputError(path, None, "head, relation and tail must be integer arrays of one length, got "
                             + ", ".join(f"{len(c)} {c.dtype}" for c in cols))
        out[split] = np.stack(cols, 1).astype(np.int64)
        for neg in ("head_neg", "tail_neg"):
            if neg in d:
                out[f"{split}_{neg}"] = _negatives(path, neg, d[neg], len(cols[0]))
    if ("test_head_neg" in out) != ("test_tail_neg" in out):
        raise InputError(root / "split" / "time" / "test.pt", None, "holds only one of head_neg and tail_neg")
    allt = np.concatenate([out[s] for s in SPLITS])
    if (allt < 0).any():
        raise KgevalError(f"{root}: negative ids in the split files")
    for key, name, columns, cols in (("entities", "nodeidx2entityid", ("node idx", "entity id"), [0, 2]),
                                     ("relations", "reltype2relid", ("reltype", "rel id"), [1])):
        ids = allt[:, cols]
        top = int(ids.max()) + 1 if len(allt) else 0
        bound, why = _id_bound(ids, top, key)
        path = root / "mapping" / f"{name}.csv.gz"
        if path.is_file():
            out[key] = _mapping(path, columns, bound, why)
            n = limit = len(out[key])
            problem = f"but {path} maps only {n} ids"
        else:  # without a mapping the largest id gives the count (OGB numbers ids densely from 0)
            n, limit = top, bound
            problem = f"more than {bound:,} {key}: {why}"
        for split in SPLITS:
            over = np.flatnonzero((out[split][:, cols] >= limit).any(axis=1))
            if len(over):
                raise InputError(root / "split" / "time" / f"{split}.pt", None,
                                 f"triple {over[0]} names id {out[split][over[0], cols].max():,}, {problem}")
        out[f"num_{key}"] = n
    for neg in ("head_neg", "tail_neg"):
        a = out.get(f"test_{neg}")
        if a is not None and len(a) and (a.min() < 0 or a.max() >= out["num_entities"]):
            raise InputError(root / "split" / "time" / "test.pt", None,
                             f"{neg!r} names entity {a.max() if a.max() >= 0 else a.min()}, outside the graph's "
                             f"{out['num_entities']} entities")
    return out


def _id_bound(ids: np.ndarray, top: int, what: str) -> tuple[int, str]:
    """How many ``what`` (entities or relations) a graph whose split files name ``ids`` (largest ``top`` - 1)
    may have, and why: ``KGEVAL_MAX_IDS`` where set, else twice its distinct ids, or a million more than them in
    a small graph. OGB numbers ids densely and a model has a row for each, so an id space far beyond the ids in
    use is a stray id (one id 2^33 would make an 8.6-billion-entity graph) or a mapping that is not this graph's."""
    explicit = env_number("KGEVAL_MAX_IDS", "ids")
    if explicit is not None:
        return explicit, "the limit KGEVAL_MAX_IDS sets"
    if top <= 2 * ids.size + _ID_SLACK:  # a mark per id: memory of the order of the ids' own
        seen = np.zeros(top, bool)
        seen[ids.reshape(-1)] = True
        distinct = int(np.count_nonzero(seen))
    else:
        distinct = len(np.unique(ids))
    bound = max(2 * distinct, distinct + _ID_SLACK)
    return bound, (f"the split files name {distinct:,} distinct {what}, and a graph may have at most twice "
                   f"those or {_ID_SLACK:,} more (a stray id, or a mapping of another graph; if it is right, set "
                   f"KGEVAL_MAX_IDS=<{what}>)")


def _negatives(path: Path, name: str, value, n: int) -> np.ndarray:
    """OGB's ``name`` array of a split: one row of negatives per triple."""
    a = np.asarray(value)
    if a.ndim != 2 or len(a) != n or a.dtype.kind not in "iu":
        raise InputError(path, None, f"{name!r} is a {a.dtype} array of shape {a.shape}, expected integers of "
                                     f"shape ({n}, k): a row of negatives per triple")
    return a.astype(np.int64, copy=False)


def _mapping(path: Path, columns: tuple[str, str], bound: int, why: str) -> list[str]:
    """The names of OGB's mapping file ``path`` (a header ``columns``, then index,name rows), in index order; at
    most ``bound`` rows (``why``), checked while the file streams, before pandas holds any of it."""
    size, lines = measure(path, bound + 1, why)  # a header, then a row per id
    # pandas holds each field as a Python str (about 60 bytes besides its text)
    check_memory(path, 2 * size + 128 * lines, f"its {max(lines - 1, 0):,} rows")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, on_bad_lines="error")
    except pd.errors.ParserError as exc:  # pandas names the line
        raise InputError(path, None, str(exc).strip().splitlines()[-1]) from None
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise CorruptFileError(path, f"not a readable gzip csv: {exc}") from None
    if tuple(df.columns) != columns:
        raise InputError(path, 1, f"header {','.join(df.columns)!r}, expected {','.join(columns)!r}")
    idx = pd.to_numeric(df[columns[0]], errors="coerce").to_numpy(np.float64)
    order = np.argsort(idx, kind="stable")
    wrong = np.flatnonzero(idx[order] != np.arange(len(idx)))
    if len(wrong):  # the indices must be 0..n-1, each once (OGB writes them in order)
        row = int(order[wrong[0]])
        raise InputError(path, row + 2, f"index {df[columns[0]].iloc[row]!r}: the indices must be 0 to "
                                        f"{len(idx) - 1}, each once")
    return df[columns[1]].to_numpy()[order].tolist()


def read_wikidata5m(root: str | Path, prefix: str = "wikidata5m_transductive") -> dict:
    """``train``/``valid``/``test`` (n, 3) int64 triples, ``entities`` and ``relations`` (the id strings)."""
    import pyarrow as pa

    root = Path(root)
    paths = [root / f"{prefix}_{split}.txt" for split in SPLITS]
    for path in paths:
        if not path.is_file():
            raise KgevalError(f"{path}: not found (Wikidata5M's files are {prefix}_{{train,valid,test}}.txt)")
    # each file streamed through the limits first (a NUL byte, an over-long line, too many lines: refused in
    # constant memory), then what Arrow will hold weighed against the memory there is
    sizes = [measure(path) for path in paths]
    check_memory(max(zip((b for b, _ in sizes), paths))[1], sum(2 * b + 24 * n for b, n in sizes),
                 f"the split files' {sum(n for _, n in sizes):,} lines")
    splits = [_wikidata5m_split(path) for path in paths]
    # ids numbered in order of first appearance over the heads of train, valid, test, then their tails
    # (relations apart): Arrow's dictionary encoding numbers a column's distinct strings in that order, in C++,
    # and keeps each string once (pandas' str columns are Python objects under pandas 2: 4-5 GB at full size)
    ent = pa.chunked_array([c for t in splits for c in t.column(0).chunks]
                           + [c for t in splits for c in t.column(2).chunks], pa.string()).dictionary_encode()
    rel = pa.chunked_array([c for t in splits for c in t.column(1).chunks], pa.string()).dictionary_encode()
    sizes = [t.num_rows for t in splits]
    n = sum(sizes)
    del splits  # the strings: only the codes and each distinct string once are needed from here
    ent_codes, rel_codes = (np.concatenate([np.zeros(0, np.int32)] + [c.indices.to_numpy() for c in a.chunks])
                            for a in (ent, rel))
    triples = np.stack([ent_codes[:n], rel_codes, ent_codes[n:]], 1).astype(np.int64)
    del ent_codes, rel_codes
    entities, relations = (a.chunks[0].dictionary.to_pylist() if a.num_chunks else [] for a in (ent, rel))
    out: dict = {"entities": entities, "relations": relations}
    start = 0
    for split, size in zip(SPLITS, sizes):
        out[split] = triples[start:start + size]
        start += size
    out["num_entities"], out["num_relations"] = len(entities), len(relations)
    return out


def _wikidata5m_split(path: Path):
    """One split file as an Arrow table of three string columns (head, relation, tail)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    names = ["head", "relation", "tail"]
    if not path.stat().st_size:
        return pa.table({c: pa.array([], pa.string()) for c in names})
    try:
        t = csv.read_csv(path, read_options=csv.ReadOptions(column_names=names),
                         parse_options=csv.ParseOptions(delimiter="\t", quote_char=False),
                         convert_options=csv.ConvertOptions(column_types={c: pa.string() for c in names},
                                                            strings_can_be_null=False))
    except pa.ArrowInvalid as exc:  # Arrow names the row's text, not its line: find the line
        _bad_line(path)
        raise InputError(path, None, str(exc).strip().splitlines()[0]) from None
    empty = pc.or_(pc.or_(pc.equal(t.column(0), ""), pc.equal(t.column(1), "")), pc.equal(t.column(2), ""))
    if pc.any(empty).as_py():
        raise InputError(path, _line_of_row(path, int(pc.index(empty, True).as_py())), "an empty field")
    for i, name in enumerate(names):  # "Q5 " would be an entity apart from "Q5": ids are compared as written
        col = t.column(i)
        padded = pc.not_equal(pc.utf8_trim_whitespace(col), col)
        if pc.any(padded).as_py():
            row = int(pc.index(padded, True).as_py())
            raise InputError(path, _line_of_row(path, row), f"the {name} {col[row].as_py()!r} begins or ends with "
                                                            "white space (an id apart from the one without it)")
    return t


def _bad_line(path: Path) -> None:
    """Raise the one-line error naming the first line without three tab-separated fields (an error path)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\r\n").count("\t") + 1
            if line.strip("\r\n") and fields != 3:
                raise InputError(path, lineno, f"{fields} tab-separated fields, expected 3 (head, relation, tail)")


def _line_of_row(path: Path, row: int) -> int:
    """The line number of data row ``row`` (blank lines hold none; an error path)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip("\r\n"):
                if row == 0:
                    return lineno
                row -= 1
    return lineno
