"""Readers of the real large graphs' layouts, into integer triples the block engine ranks.

* ogbl-wikikg2, as OGB's ``LinkPropPredDataset`` leaves it: ``<root>/split/time/{train,valid,test}.pt``, each a
  dict of numpy arrays ``head``, ``relation``, ``tail`` (valid/test also ``head_neg``/``tail_neg``: OGB's 500
  negatives per triple), and ``<root>/mapping/`` for names. Ids are already integers.
* Wikidata5M (transductive): ``wikidata5m_transductive_{train,valid,test}.txt``, tab-separated ``Q… P… Q…``;
  ids are mapped to integers in order of first appearance over train, valid, test (entities and relations apart).

The files are read as they are: nothing is renamed, moved or rewritten.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError, KgevalError

SPLITS = ("train", "valid", "test")


def read_wikikg2(root: str | Path) -> dict:
    """``train``/``valid``/``test`` (n, 3) int64 triples, ``num_entities``, ``num_relations`` and, where the
    files have them, ``test_head_neg``/``test_tail_neg`` (and valid's)."""
    import torch

    root = Path(root)
    out: dict = {}
    for split in SPLITS:
        path = root / "split" / "time" / f"{split}.pt"
        if not path.is_file():
            raise KgevalError(f"{path}: not found (an ogbl-wikikg2 folder has split/time/{split}.pt)")
        # OGB pickles dicts of numpy arrays, which torch's weights-only loader refuses; the folder is the user's
        # own download, named by the user
        d = torch.load(path, weights_only=False)
        missing = [k for k in ("head", "relation", "tail") if k not in d]
        if missing:
            raise InputError(path, None, f"no {missing[0]!r} array (has {', '.join(map(str, d))})")
        out[split] = np.stack([np.asarray(d[k], np.int64) for k in ("head", "relation", "tail")], 1)
        for neg in ("head_neg", "tail_neg"):
            if neg in d:
                out[f"{split}_{neg}"] = np.asarray(d[neg], np.int64)
    allt = np.concatenate([out[s] for s in SPLITS])
    if (allt < 0).any():
        raise KgevalError(f"{root}: negative ids in the split files")
    out["num_entities"] = int(allt[:, [0, 2]].max()) + 1
    out["num_relations"] = int(allt[:, 1].max()) + 1
    return out


def read_wikidata5m(root: str | Path, prefix: str = "wikidata5m_transductive") -> dict:
    """``train``/``valid``/``test`` (n, 3) int64 triples, ``entities`` and ``relations`` (the id strings)."""
    root = Path(root)
    frames = []
    for split in SPLITS:
        path = root / f"{prefix}_{split}.txt"
        if not path.is_file():
            raise KgevalError(f"{path}: not found (Wikidata5M's files are {prefix}_{{train,valid,test}}.txt)")
        try:
            df = pd.read_csv(path, sep="\t", header=None, dtype=str, quoting=3, keep_default_na=False,
                             on_bad_lines="error", engine="c") if path.stat().st_size else pd.DataFrame(columns=[0, 1, 2])
        except pd.errors.ParserError as exc:  # "Expected 3 fields in line 5, saw 4": pandas names the line
            raise InputError(path, None, str(exc).strip().splitlines()[-1]) from None
        if df.shape[1] != 3:
            raise InputError(path, 1, f"{df.shape[1]} tab-separated fields, expected 3 (head, relation, tail)")
        empty = (df == "").any(axis=1).to_numpy()
        if empty.any():
            raise InputError(path, int(np.flatnonzero(empty)[0]) + 1, "an empty field")
        frames.append(df)
    both = pd.concat(frames, ignore_index=True)
    ent_codes, entities = pd.factorize(pd.concat([both[0], both[2]], ignore_index=True), sort=False)
    rel_codes, relations = pd.factorize(both[1], sort=False)
    n = len(both)
    triples = np.stack([ent_codes[:n], rel_codes, ent_codes[n:]], 1).astype(np.int64)
    out: dict = {"entities": list(entities), "relations": list(relations)}
    start = 0
    for split, df in zip(SPLITS, frames):
        out[split] = triples[start:start + len(df)]
        start += len(df)
    out["num_entities"], out["num_relations"] = len(entities), len(relations)
    return out
