"""``kgeval reproduce``: compare a results folder with a reference pack or another results folder, bit for bit.

Both sides have the layout of a results folder (``metrics/<test set>/evaluation.csv``, ``per_answer.parquet``,
``per_question.parquet``; a pack adds ``runs/<test set>/top<k>.parquet``, a run ``models/`` and ``scores/``);
what both have is compared:

* every test set's ``evaluation.csv`` value by value (a float's bits as parsed from its text), its systems and
  columns;
* the per-item tables column by column, over the columns both keep (a pack keeps the headline ones), by the
  manifest's canonical digests (:mod:`.manifest`);
* the trained models and score dumps by their manifests' digests (a pack carries the manifest of the run it was
  packed from, so a rerun's models are compared with the pack's too), or, for a run without a manifest, by
  digests computed from its files;
* the findings table and each claim's verdict, from ``tables/findings.csv`` or the manifest's verdicts.

The environment differences that may explain a difference come from both manifests (:mod:`.report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ..errors import InputError
from .manifest import column_digests, dump_entry, model_entry, read_manifest, read_table, read_verdicts

#: the values the per-model table shows side by side (the study's headline metrics)
SHOWN = ("micro_mrr", "macro_mrr", "micro_hits@10", "macro_hits@10")
PER_ITEM = ("per_answer.parquet", "per_question.parquet")
FINDINGS = Path("tables") / "findings.csv"


@dataclass
class Side:
    """One side of a comparison: its results root (the folder holding ``metrics/``) and what describes it."""

    path: Path
    root: Path
    manifest: dict[str, Any] | None
    provenance: dict[str, Any] | None

    @property
    def label(self) -> str:
        return str(self.path)

    def testsets(self) -> list[str]:
        return sorted(p.parent.name for p in (self.root / "metrics").glob("*/evaluation.csv"))


@dataclass
class Artifact:
    name: str
    identical: bool
    note: str = ""


@dataclass
class Comparison:
    ours: Side
    theirs: Side
    artifacts: list[Artifact] = field(default_factory=list)
    #: testset, System, metric, ours, theirs, difference (ours − theirs), identical (bits)
    values: pd.DataFrame | None = None
    #: claim, ours, theirs, changed (the verdict word), or None when a side has no findings
    verdicts: pd.DataFrame | None = None
    #: why something was not compared or could not be: test sets, systems, sizes, a side without findings
    notes: list[str] = field(default_factory=list)
    #: differences in what the two sides hold (test sets or systems only on one side): never identical then
    structural: bool = False
    #: test sets whose per-item tables differ in rows: the two runs answered different questions
    resized: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[Artifact]:
        return [a for a in self.artifacts if not a.identical]

    @property
    def verdicts_changed(self) -> pd.DataFrame:
        if self.verdicts is None:
            return pd.DataFrame(columns=["claim", "ours", "theirs", "changed"])
        return self.verdicts[self.verdicts["changed"]]

    @property
    def identical(self) -> bool:
        """The exit status's question: everything both sides hold is bit-identical, and they hold the same."""
        return bool(self.artifacts) and not self.differing and not self.structural and self.verdicts_changed.empty


def open_side(path: str | Path) -> Side:
    """A results folder (``results/`` or the workflow folder above it) or a reference pack."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "no such folder")
    for root in (path, path / "results"):
        if (root / "metrics").is_dir() and any((root / "metrics").glob("*/evaluation.csv")):
            from ..tables.reference import read_provenance

            return Side(path, root, read_manifest(root), read_provenance(root))
    raise InputError(path, None, "neither a results folder nor a reference pack: it has no "
                                 "metrics/<test set>/evaluation.csv (nor results/metrics/…)")


def reproduce(results: str | Path, against: str | Path, testsets: list[str] | None = None) -> Comparison:
    """Compare ``results`` (a results folder or pack) with ``against`` (a reference pack or results folder):
    :class:`Comparison`, whose ``identical`` is true only when every artifact both hold is bit-identical.
    ``testsets`` restricts the comparison to those test sets (each held by both sides). ``kgeval reproduce``
    prints :func:`kgeval.reproduce.report.render` of it."""
    if testsets is not None and not testsets:  # an empty list would compare the models alone and say identical
        raise InputError(None, None, "--testsets: name at least one test set (or leave it out: all of both)")
    ours, theirs = open_side(results), open_side(against)
    cmp = Comparison(ours, theirs)
    a, b = set(ours.testsets()), set(theirs.testsets())
    if testsets is not None:
        for side, held in ((ours, a), (theirs, b)):
            missing = [t for t in testsets if t not in held]
            if missing:
                raise InputError(side.path, None, f"holds no test set {missing[0]!r} (it holds "
                                                  f"{', '.join(sorted(held))})")
        a, b = a & set(testsets), b & set(testsets)
        cmp.notes.append(f"compared on the test sets {', '.join(testsets)} only")
    for side, only in ((ours, a - b), (theirs, b - a)):
        if only:
            cmp.structural = True
            cmp.notes.append(f"test sets only in {side.label}: {', '.join(sorted(only))} (not compared)")
    frames = []
    for t in sorted(a & b):
        frames.append(_evaluation(cmp, t))
        for name in PER_ITEM:
            _per_item(cmp, f"metrics/{t}/{name}")
    for rel in sorted({p.relative_to(ours.root).as_posix() for p in ours.root.glob("runs/*/top*.parquet")}
                      & {p.relative_to(theirs.root).as_posix() for p in theirs.root.glob("runs/*/top*.parquet")}):
        if rel.split("/")[1] not in a & b:
            continue
        _per_item(cmp, rel)
    cmp.values = pd.concat(frames, ignore_index=True) if frames else None
    _digests(cmp)
    _findings(cmp)
    return cmp


# ---- metrics tables ----------------------------------------------------------------------------------------------
def _same_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise: the same float64 bits (NaN equals NaN of the same bits; 0.0 differs from −0.0)."""
    return np.asarray(x, dtype="<f8").view("<i8") == np.asarray(y, dtype="<f8").view("<i8")


def _evaluation(cmp: Comparison, t: str) -> pd.DataFrame:
    """Compare one test set's evaluation.csv value by value; return the shown metrics side by side."""
    name = f"metrics/{t}/evaluation.csv"
    x, y = (read_table(s.root / name) for s in (cmp.ours, cmp.theirs))
    for df, side in ((x, cmp.ours), (y, cmp.theirs)):
        if "System" not in df.columns:
            raise InputError(side.root / name, None, "has no System column: not an evaluation table")
    x, y = x.drop_duplicates("System").set_index("System"), y.drop_duplicates("System").set_index("System")
    systems = [s for s in x.index if s in y.index]
    notes = []
    for side, only in ((cmp.ours, [s for s in x.index if s not in y.index]),
                       (cmp.theirs, [s for s in y.index if s not in x.index])):
        if only:
            cmp.structural = True
            notes.append(f"systems only in {side.label}: {', '.join(only)}")
    cols = [c for c in x.columns if c in y.columns]
    extra = sorted(set(x.columns) ^ set(y.columns))
    if extra:
        notes.append(f"{len(extra)} column(s) only on one side ({', '.join(extra[:4])}{', …' if len(extra) > 4 else ''})")
    differ = []
    for c in cols:
        xv, yv = x.loc[systems, c], y.loc[systems, c]
        if xv.dtype.kind in "fiu" and yv.dtype.kind in "fiu":
            same = _same_bits(xv.to_numpy(np.float64), yv.to_numpy(np.float64))
        else:
            same = xv.astype(str).to_numpy() == yv.astype(str).to_numpy()
        if not same.all():
            differ.append(c)
    if differ:
        notes.insert(0, f"{len(differ)} of {len(cols)} metrics differ")
    cmp.artifacts.append(Artifact(name, not differ and not notes, "; ".join(notes)))
    rows = []
    for s in systems:
        for m in SHOWN:
            if m in x.columns and m in y.columns:
                o, th = float(x.at[s, m]), float(y.at[s, m])
                rows.append({"testset": t, "System": s, "metric": m, "ours": o, "theirs": th, "difference": o - th,
                             "identical": bool(_same_bits(np.array([o]), np.array([th]))[0])})
    return pd.DataFrame(rows, columns=["testset", "System", "metric", "ours", "theirs", "difference", "identical"])


def _per_item(cmp: Comparison, name: str) -> None:
    """Compare a per-item table over the columns both sides keep, by their canonical digests."""
    paths = [s.root / name for s in (cmp.ours, cmp.theirs)]
    if not all(p.is_file() for p in paths):
        missing = [str(p) for p in paths if not p.is_file()]
        cmp.notes.append(f"{name}: not compared (missing: {', '.join(missing)})")
        return
    schemas = [pq.read_schema(p).names for p in paths]
    cols = [c for c in schemas[0] if c in schemas[1]]
    rows = [pq.read_metadata(p).num_rows for p in paths]
    if rows[0] != rows[1]:
        cmp.resized.append(name.split("/")[1])
        cmp.artifacts.append(Artifact(name, False, f"{rows[0]:,} rows against {rows[1]:,}: the runs' test sets "
                                                   "differ in size (another dataset or configuration)"))
        return
    digests = [column_digests(pq.read_table(p, columns=cols)) for p in paths]
    differ = [c for c in cols if digests[0][c] != digests[1][c]]
    cmp.artifacts.append(Artifact(name, not differ, f"columns differ: {', '.join(differ)}" if differ else
                                  f"{len(cols)} common columns"))


# ---- models and dumps ----------------------------------------------------------------------------------------------
def _artifact_digests(side: Side) -> dict[str, str] | None:
    """Path → digest of each model and score dump: from the manifest, else from the files of a results folder
    (an older run), else None (a pack without a manifest holds neither)."""
    if side.manifest is not None:
        return {k: v["sha256"] for k, v in side.manifest.get("artifacts", {}).items()
                if v.get("kind") in ("model", "dump")}
    models = sorted(side.root.glob("models/*/*/model.pt"))
    dumps = sorted(p.parent for p in side.root.glob("scores/*/*/meta.json"))
    if not models and not dumps:
        return None
    out = {p.relative_to(side.root).as_posix(): model_entry(p)["sha256"] for p in models}
    out.update({p.relative_to(side.root).as_posix(): dump_entry(p)["sha256"] for p in dumps})
    return out


def _digests(cmp: Comparison) -> None:
    x, y = _artifact_digests(cmp.ours), _artifact_digests(cmp.theirs)
    if x is None or y is None:
        lacking = [s.label for s, d in ((cmp.ours, x), (cmp.theirs, y)) if d is None]
        what = _have(lacking, "no manifest.json and no models/ or scores/")
        cmp.notes.append(f"models and score dumps: not compared ({what})")
        return
    common = sorted(set(x) & set(y))
    for name in common:
        cmp.artifacts.append(Artifact(name, x[name] == y[name], "" if x[name] == y[name] else
                                      f"sha256 {x[name][:12]} against {y[name][:12]}"))
    only = len(set(x) ^ set(y))
    if only:
        cmp.notes.append(f"{only} model(s) or dump(s) only on one side (not compared)")


def _have(sides: list[str], what: str) -> str:
    if len(sides) == 2 and sides[0] == sides[1]:
        sides = sides[:1]
    return f"{' and '.join(sides)} {'have' if len(sides) > 1 else 'has'} {what}"


# ---- findings ----------------------------------------------------------------------------------------------------
def claim_id(claim: str) -> str:
    """A claim's number (``4``, ``11f``): the text before its first full stop, which other wording keeps."""
    head = claim.split(". ", 1)[0].strip()
    return head if head and len(head) <= 8 else claim


def verdict_word(text: str) -> str:
    """The verdict without its explanation (``undecided (interval …)`` → ``undecided``)."""
    return str(text).split("(", 1)[0].split(";", 1)[0].strip()


def _verdicts(side: Side) -> dict[str, str] | None:
    path = side.root / FINDINGS
    if path.is_file():
        return read_verdicts(path)
    if side.manifest is not None and side.manifest.get("verdicts"):
        return dict(side.manifest["verdicts"])
    return None


def _timed(table: pd.DataFrame) -> np.ndarray:
    """The rows of a findings table whose statistic is a wall-clock time (their ``interval`` says so)."""
    if "interval" not in table.columns or "claim" not in table.columns:
        return np.zeros(len(table), bool)
    return table["interval"].astype(str).str.contains("wall-clock", regex=False).to_numpy()


def _findings(cmp: Comparison) -> None:
    paths = [s.root / FINDINGS for s in (cmp.ours, cmp.theirs)]
    if all(p.is_file() for p in paths):
        tables = [read_table(p, text=True) for p in paths]
        timed = [_timed(t) for t in tables]
        x, y = (column_digests(t[~m].reset_index(drop=True)) for t, m in zip(tables, timed, strict=True))
        cmp.artifacts.append(Artifact(FINDINGS.as_posix(), x == y, "" if x == y else "the claims' table differs"))
        names = sorted({claim_id(c) for t, m in zip(tables, timed, strict=True) for c in t.loc[m, "claim"]})
        if names:  # a rerun's seconds never repeat: such a claim's row is compared by its verdict only
            cmp.notes.append(f"{FINDINGS.as_posix()}: claim {', '.join(names)} (wall-clock times) compared by "
                             "verdict only")
    v = [_verdicts(s) for s in (cmp.ours, cmp.theirs)]
    if v[0] is None or v[1] is None:
        lacking = [s.label for s, d in zip((cmp.ours, cmp.theirs), v, strict=True) if d is None]
        cmp.notes.append(f"verdicts: not compared ({_have(lacking, 'no findings')})")
        return
    x = {claim_id(c): h for c, h in v[0].items()}
    y = {claim_id(c): h for c, h in v[1].items()}
    rows = [{"claim": c, "ours": x.get(c, "—"), "theirs": y.get(c, "—"),
             "changed": verdict_word(x.get(c, "—")) != verdict_word(y.get(c, "—"))} for c in dict.fromkeys([*x, *y])]
    cmp.verdicts = pd.DataFrame(rows, columns=["claim", "ours", "theirs", "changed"])
