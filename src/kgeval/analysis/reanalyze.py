"""Re-analysis of metric tables alone: every τ table and figure that needs only per-system metrics.

Reads a folder laid out like the paper's result release (all CSV with a header row, one row per system in
column ``System``)::

    <original>/evaluation.csv        <sample>/evaluation.csv        <complete>/evaluation.csv
    <second>/evaluation.csv           <complete>/pooling_depth.csv   (column Depth, 0 = the sample)
    <original|sample|complete>/lp_per_rel_type.csv                  (System, QuestionType, RelationType, …)
    <complete>/lp_sample_rel_dist.csv

with the published folder names by default (FB-Test-O, FB-Test-S, FB-Test-S-C, WN18RR). Writes Figure 3, 4 and
5 (CSV, PNG, PDF), Tables 3 and 4, τ between every pair of test sets for every shared metric, and the
cross-dataset comparison of raw and chance-adjusted metrics where those columns exist. A missing file skips
the outputs that need it, with a note in ``notes.txt``; a malformed table is an error naming the file.
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import pandas as pd

from ..errors import InputError
from ..io import atomic_open, write_csv, write_table
from ..metrics.registry import REGISTRY
from . import families, figures, study
from .selections import FIG3, FIG4, FIG5, TABLE3, TABLE4

log = logging.getLogger(__name__)

PUBLISHED_NAMES = {"original": "FB-Test-O", "sample": "FB-Test-S", "complete": "FB-Test-S-C", "second": "WN18RR"}


def read_table(path: Path, required: tuple[str, ...] = ("System",)) -> pd.DataFrame:
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"not a readable CSV table: {exc}") from exc
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(path, 1, f"header lacks column(s) {missing}")
    if df["System"].isna().any():
        raise InputError(path, int(df.index[df["System"].isna()][0]) + 2, "row without a System")
    dup = df.duplicated([c for c in required if c in df.columns])
    if dup.any():
        raise InputError(path, int(df.index[dup][0]) + 2, "duplicate row for the same system")
    numeric = [c for c in df.columns if c not in ("System", "QuestionType", "RelationType")]
    for c in numeric:
        bad = pd.to_numeric(df[c], errors="coerce").isna() & df[c].notna()
        if bad.any():
            raise InputError(path, int(df.index[bad][0]) + 2, f"column {c!r} holds a non-number: {df[c][bad].iloc[0]!r}")
    return df


def reanalyze(folder: str | Path, out: str | Path, names: dict[str, str] | None = None) -> list[str]:
    """Write every analysis the tables allow into ``out``; return the notes (what was skipped and why)."""
    folder, out = Path(folder), Path(out)
    names = {**PUBLISHED_NAMES, **(names or {})}
    out.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []

    def load(role: str, file: str, required=("System",)) -> pd.DataFrame | None:
        path = folder / names[role] / file
        if not path.is_file():
            notes.append(f"missing {path}: outputs that need it are skipped")
            return None
        return read_table(path, required)

    ev = {role: load(role, "evaluation.csv") for role in ("original", "sample", "complete", "second")}
    depth = load("complete", "pooling_depth.csv", ("System", "Depth"))
    per_type = {role: load(role, "lp_per_rel_type.csv", ("System", "QuestionType", "RelationType"))
                for role in ("original", "sample", "complete")}
    reweighted = load("complete", "lp_sample_rel_dist.csv")
    written: list[str] = []

    three = {names[r]: ev[r] for r in ("original", "sample", "complete") if ev[r] is not None}
    if ev["original"] is not None and FIG3 in ev["original"]:
        f3 = study.figure3(three, names["original"], FIG3)
        write_csv(f3, out / "figure3.csv")
        figures.figure3(f3, FIG3, list(three), out / "figure3.png", out / "figure3.pdf")
        written.append("figure3")
    else:
        notes.append("figure3 skipped: no original evaluation.csv with micro_mrr")

    if depth is not None:
        for fig, metrics in (("figure4", FIG4), ("figure5", FIG5)):
            present = [m for m in metrics if m in depth.columns]
            if not present:
                notes.append(f"{fig} skipped: pooling_depth.csv has none of {metrics}")
                continue
            dt = study.depth_taus(depth, present, "published")
            write_csv(dt, out / f"{fig}.csv")
            figures.depth_taus(dt, present, out / f"{fig}.png", out / f"{fig}.pdf",
                               f"τ between depth 0 and depth d of {names['complete']}")
            written.append(fig)

    if per_type["sample"] is not None and per_type["complete"] is not None:
        metrics = [m for m in TABLE3 if m in per_type["sample"] and m in per_type["complete"]]
        t3 = study.category_taus(per_type["sample"], per_type["complete"], metrics)
        write_csv(t3, out / "table3_long.csv")
        wide = t3.pivot_table(index=["QuestionType", "RelationType"], columns="Metric", values="tau").reset_index()
        write_table(wide, out / "table3.csv", out / "table3.md", out / "table3.tex",
                    caption="Table 3: τ per question side and relation category")
        written.append("table3")
    else:
        notes.append("table3 skipped: needs lp_per_rel_type.csv of the sample and the complete test set")

    if ev["sample"] is not None and ev["complete"] is not None and reweighted is not None:
        metrics = [m for m in TABLE4 if m in ev["sample"] and m in ev["complete"] and m in reweighted]
        t4 = study.reweighting_taus(ev["sample"], ev["complete"], reweighted, metrics)
        write_table(t4, out / "table4.csv", out / "table4.md", out / "table4.tex",
                    caption="Table 4: τ with the sample, complete and re-weighted relation distributions")
        written.append("table4")
    else:
        notes.append("table4 skipped: needs the sample's and the complete set's evaluation.csv and "
                     "lp_sample_rel_dist.csv")

    present = {names[r]: df for r, df in ev.items() if df is not None}
    rows = []
    unknown = set()
    for (a, da), (b, db) in itertools.combinations(present.items(), 2):
        for m in [c for c in da.columns if c in db.columns and c != "System"]:
            if m not in REGISTRY:  # a column we cannot orient (no declared direction): no τ for it
                unknown.add(m)
                continue
            rows.append({"a": a, "b": b, "Metric": m, "tau": study.tau_between(da, db, m)})
    if unknown:
        notes.append(f"not a known metric column, no τ computed: {', '.join(sorted(unknown))}")
    if rows:
        write_csv(pd.DataFrame(rows), out / "taus_between_testsets.csv")
        written.append("taus_between_testsets")

    if ev["original"] is not None and ev["second"] is not None:
        cross = families.cross_dataset(ev["original"], ev["second"], names["original"], names["second"])
        if cross.empty:
            notes.append("cross-dataset comparison skipped: no adjusted metric columns (e.g. micro_amrr)")
        else:
            write_csv(cross, out / "families_cross_dataset.csv")
            written.append("families_cross_dataset")

    with atomic_open(out / "notes.txt") as fh:
        fh.write("written: " + ", ".join(written) + "\n")
        for n in notes:
            fh.write(n + "\n")
    for n in notes:
        log.info("%s", n)
    return notes
