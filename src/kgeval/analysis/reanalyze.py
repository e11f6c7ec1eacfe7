"""Re-analysis of metric tables alone: every τ table and figure that needs only per-system metrics.

Reads a folder laid out like the paper's result release (all CSV with a header row, one row per system in
column ``System``)::

    <original>/evaluation.csv        <sample>/evaluation.csv        <complete>/evaluation.csv
    <second>/evaluation.csv           <complete>/pooling_depth.csv   (column Depth, 0 = the sample)
    <original|sample|complete>/lp_per_rel_type.csv                  (System, QuestionType, RelationType, …)
    <complete>/lp_sample_rel_dist.csv

and, where present::

    <original|sample|complete>/lp_per_rel.csv        (System, Relation, micro_mrr, …): Figure 6
    <any test set>/discriminative_power.csv         (SystemA, SystemB, one p-value column per metric): Figure 8
    <any test set>/stability.csv                    (Metric, Size, tau: one row per subsample): Figure 7

with the published folder names by default (FB-Test-O, FB-Test-S, FB-Test-S-C, WN18RR). Writes Figure 3, 4 and
5 (CSV, PNG, PDF), Tables 3 and 4, Figures 6, 7 and 8 where their tables exist, τ between every pair of test sets
for every shared metric, and the cross-dataset comparison of raw and chance-adjusted metrics where those columns
exist. A missing file skips the outputs that need it, with a note in ``notes.txt``; a malformed table is an error
naming the file.

Figure 6 draws one system (``figure6_system``, HittER by default, as in the paper), matched exactly, then without
regard to case, then as the last ``-``-separated part of the release's names (``fb15k-237-hitter``). The release's
``discriminative_power.csv`` holds the p-values of the paired t-test of every system pair (the paper's Figure 8;
each pair in both orders, read once);
Figure 8 draws the metrics of the study's Figure 8 (micro and macro MRR and Hits@10, MAP@20, nDCG@20) that the
file has, and ``figure8_summary.csv`` gives, per test set and metric, the pairs, the share significant at
α = 0.05 and the mean p-value (the area under the sorted p-value curve divided by the number of pairs: smaller is
more discriminative).
"""

from __future__ import annotations

import itertools
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..cells import restore_text_columns
from ..errors import InputError
from ..io import atomic_open, write_csv, write_table
from ..limits import read_csv as bounded_read_csv
from ..metrics.registry import REGISTRY
from ..published import (  # RELEASE: the release's tables, pinned to the authors' commit
    PUBLISHED_NAMES,
    RELEASE,
)
from . import families, figures, study
from .metric_ranges import first_out_of_range
from .release_checks import check_depth, check_pvalues
from .selections import FIG3, FIG4, FIG5, FIG6, MACRO_STUDY, MICRO_STUDY, TABLE3, TABLE4

log = logging.getLogger(__name__)

ROLES = ("original", "sample", "complete", "second")
LABEL_COLUMNS = ("System", "SystemA", "SystemB", "QuestionType", "RelationType", "Relation", "TestSet", "Metric",
                 "Test")
FIG8_METRICS = MICRO_STUDY + MACRO_STUDY
ALPHA = 0.05
# the cells of a metric column read as "no value" (pandas' own NA spellings, which it no longer applies: every
# cell is read as text so that label columns keep names such as NA)
MISSING_CELLS = frozenset({"", "NA", "N/A", "n/a", "#N/A", "NaN", "nan", "-NaN", "-nan", "NULL", "null", "None",
                           "<NA>"})
# a name's dataset prefix ends at one of these (fb15k-237-atte, wn18rr_atte)
SEPARATORS = "-_./: "


def read_table(path: Path, required: tuple[str, ...] = ("System",)) -> pd.DataFrame:
    """A release table with its label columns as text and every other column as numbers.

    Every cell is read as text first, the header as the first row: a system called ``NA``, ``None`` or ``01``
    keeps its name, and a column named twice is seen (pandas would rename the second ``micro_mr.1``)."""
    try:
        raw = restore_text_columns(bounded_read_csv(path, header=None, dtype=str, keep_default_na=False))
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"not a readable CSV table: {exc}") from exc
    return _typed(path, raw, required)


def _typed(path: Path, raw: pd.DataFrame, required: tuple[str, ...]) -> pd.DataFrame:
    header = [c if c else f"Unnamed: {i}" for i, c in enumerate(raw.iloc[0].fillna(""))]
    twice = [c for c in dict.fromkeys(header) if header.count(c) > 1]
    if twice:
        raise InputError(path, 1, f"column {twice[0]!r} appears {header.count(twice[0])} times in the header")
    df = raw.iloc[1:].set_axis(header, axis=1).reset_index(drop=True)  # row i is line i + 2
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(path, 1, f"header lacks column(s) {missing}")
    if df.empty:
        raise InputError(path, None, "a header and no rows: the table lists no system")
    for c in ("System", "SystemA", "SystemB"):
        if c in required:
            blank = df[c].isna() | (df[c].str.strip() == "")
            if blank.any():
                raise InputError(path, int(df.index[blank][0]) + 2, f"row without a {c}")
    keys = [c for c in required if c in df.columns]
    dup = df.duplicated(keys) if keys else pd.Series(False, index=df.index)
    if dup.any():
        raise InputError(path, int(df.index[dup][0]) + 2, "duplicate row for the same system")
    numeric = {c: _numbers(path, df, c) for c in df.columns if c not in LABEL_COLUMNS}
    return df.assign(**numeric) if numeric else df


def _numbers(path: Path, df: pd.DataFrame, column: str) -> pd.Series:
    """A metric column as numbers: an empty cell (or NA, NaN, null, …) is a missing value; text and ±inf are
    refused (a metric value is finite; an infinite one is a broken export, and τ would rank it silently)."""
    text = df[column].fillna("").str.strip()
    missing = text.isin(MISSING_CELLS)
    values = pd.to_numeric(text.mask(missing), errors="coerce")
    bad = values.isna() & ~missing
    if bad.any():
        raise InputError(path, int(df.index[bad][0]) + 2,
                         f"column {column!r} holds a non-number: {df[column][bad].iloc[0]!r}")
    infinite = np.isinf(values.to_numpy(dtype=float))
    if infinite.any():
        first = int(np.flatnonzero(infinite)[0])
        raise InputError(path, int(df.index[first]) + 2, f"column {column!r} holds {text.iloc[first]!r}: a metric "
                                                          "value is a finite number (leave the cell empty where "
                                                          "there is none)")
    if (bad := first_out_of_range(column, values.to_numpy(dtype=float), df.columns)) is not None:  # MRR 7.5
        raise InputError(path, int(df.index[bad[0]]) + 2, f"column {column!r} holds {text.iloc[bad[0]]!r}: {bad[1]}")
    return values


def match_system(systems, wanted: str) -> str | None:
    """The name in ``systems`` that stands for ``wanted``: the same, the same up to case, or the last
    ``-``-separated part of the name up to case (the release calls HittER ``fb15k-237-hitter``)."""
    systems = list(dict.fromkeys(systems))
    for test in (lambda s: s == wanted, lambda s: s.lower() == wanted.lower(),
                 lambda s: s.lower().rsplit("-", 1)[-1] == wanted.lower()):
        hits = [s for s in systems if test(str(s))]
        if hits:
            return hits[0]
    return None


def pvalues_long(df: pd.DataFrame, test_set: str, test: str = "t-test") -> pd.DataFrame:
    """A discriminative-power table as rows (TestSet, Metric, Test, SystemA, SystemB, p): the release's wide layout
    (one p-value column per metric) or the pipeline's long one (figure8_pvalues.csv: Metric, Test, p)."""
    if {"Metric", "p"} <= set(df.columns):
        long = df.copy()
        long["Test"] = long["Test"] if "Test" in long else test
    else:
        metrics = [c for c in df.columns if c not in LABEL_COLUMNS]
        # the release lists every pair in both orders: keep one row per unordered pair
        pair = df[["SystemA", "SystemB"]].astype(str)
        df = df[~pd.Series([frozenset(t) for t in pair.itertuples(index=False)], index=df.index).duplicated()]
        long = df.melt(id_vars=["SystemA", "SystemB"], value_vars=metrics, var_name="Metric", value_name="p")
        long["Test"] = test
    long["TestSet"] = test_set
    return long


def discrimination_summary(long: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Per test set, test and metric: the system pairs, the share with p < α, and the mean p-value."""
    g = long.dropna(subset=["p"]).groupby(["TestSet", "Test", "Metric"], sort=False)["p"]
    out = g.agg(pairs="count", mean_p="mean").reset_index()
    out["significant_share"] = g.apply(lambda p: float((p < alpha).mean())).to_numpy()
    return out[["TestSet", "Test", "Metric", "pairs", "significant_share", "mean_p"]]


def fetch_release(manifest: str | Path, dest: str | Path, mirror: str | Path | None = None,
                  prefer_mirror: bool = True, timeout: float = 30.0) -> Path:
    """Fetch the authors' result tables (the manifest's entries under :data:`RELEASE`) into ``dest``, laid out
    as :func:`reanalyze` reads them, each from its pinned URL or the mirror (``mirror``, else
    ``$KGEVAL_MIRROR``) and verified against its SHA-256 and size, as every other input is."""
    from ..data.download import fetch, resolve_mirror
    from ..data.manifest import read_manifest

    entries = {path: res for path, res in read_manifest(manifest).items() if path.startswith(RELEASE)}
    if not entries:
        raise InputError(manifest, None, f"no entry under {RELEASE}: this manifest does not pin the authors' "
                                         "result tables (config/resources.tsv does)")
    mirror = Path(mirror).expanduser() if mirror else resolve_mirror(None)
    for path, res in entries.items():
        source = fetch(res, Path(dest) / path[len(RELEASE):], mirror=mirror, prefer_mirror=prefer_mirror,
                       timeout=timeout)
        log.info("%s: %d bytes from %s, SHA-256 verified", path, res.size, source)
    return Path(dest)


def reanalyze(folder: str | Path, out: str | Path, names: dict[str, str] | None = None,
              figure6_system: str = "HittER", shown_as: str | Path | None = None) -> list[str]:
    """Write every analysis the tables allow into ``out``; return the notes (what was skipped and why).
    ``shown_as``: how notes and errors name ``folder`` (where a staged folder ends up)."""
    folder, out = Path(folder), Path(out)
    if shown_as is None:
        return _reanalyze(folder, out, names, figure6_system, lambda text: text)

    def shown(text: str) -> str:
        return text.replace(str(folder), str(shown_as))

    try:
        return _reanalyze(folder, out, names, figure6_system, shown)
    except InputError as exc:
        raise InputError(exc.path and shown(exc.path), exc.line, shown(exc.problem)) from None


def _reanalyze(folder: Path, out: Path, names: dict[str, str] | None, figure6_system: str, shown) -> list[str]:
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
    if depth is not None:
        check_depth(folder / names["complete"] / "pooling_depth.csv", depth)
    per_type = {role: load(role, "lp_per_rel_type.csv", ("System", "QuestionType", "RelationType"))
                for role in ("original", "sample", "complete")}
    reweighted = load("complete", "lp_sample_rel_dist.csv")
    paths = {r: folder / names[r] / "evaluation.csv" for r in ROLES}
    one = [r for r in ("original", "sample", "complete") if ev[r] is not None]
    _check_same_systems({paths[r]: ev[r] for r in one})
    # the second dataset's systems under the first's names, for the τ and comparisons across datasets
    across = dict(ev)
    if one and ev["second"] is not None:
        across["second"] = _align_second(paths[one[0]], ev[one[0]], paths["second"], ev["second"], notes)
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

    _figure6(folder, out, names, figure6_system, notes, written)
    _figure7(folder, out, names, notes, written)
    _figure8(folder, out, names, notes, written)

    present = {names[r]: df for r, df in across.items() if df is not None}
    rows = []
    unknown = set()
    for (a, da), (b, db) in itertools.combinations(present.items(), 2):
        for m in [c for c in da.columns if c in db.columns and c != "System"]:
            if m not in REGISTRY:  # a column we cannot orient (no declared direction): no τ for it
                unknown.add(m)
                continue
            tau = study.tau_between(da, db, m)
            rows.append({"a": a, "b": b, "Metric": m, "tau": tau})
            if not pd.notna(tau):
                notes.append(f"τ of {m} between {a} and {b} is empty: {_empty_cells(da, db, a, b, m)}")
    if unknown:
        notes.append(f"not a known metric column, no τ computed: {', '.join(sorted(unknown))}")
    if rows:
        write_csv(pd.DataFrame(rows), out / "taus_between_testsets.csv")
        written.append("taus_between_testsets")

    if ev["original"] is not None and ev["second"] is not None:
        cross = families.cross_dataset(ev["original"], across["second"], names["original"], names["second"])
        if cross.empty:
            notes.append("cross-dataset comparison skipped: no adjusted metric columns (e.g. micro_amrr)")
        else:
            write_csv(cross, out / "families_cross_dataset.csv")
            written.append("families_cross_dataset")

    notes = [shown(n) for n in notes]
    with atomic_open(out / "notes.txt") as fh:
        fh.write("written: " + ", ".join(written) + "\n")
        for n in notes:
            fh.write(n + "\n")
    for n in notes:
        log.info("%s", n)
    return notes


def _check_same_systems(tables: dict[Path, pd.DataFrame]) -> None:
    """The test sets of one dataset rank the same systems (τ compares two rankings of one set of systems)."""
    first = next(iter(tables), None)
    for path, df in tables.items():
        a, b = set(tables[first]["System"]), set(df["System"])
        if a != b:
            only_a, only_b = sorted(a - b), sorted(b - a)
            raise InputError(path, None, f"lists other systems than {first}: {only_b[:3]} only here, {only_a[:3]} "
                                         "only there (the test sets of one dataset rank the same systems; rename "
                                         "them to match)")


def dataset_prefix(systems) -> str:
    """The prefix every system name of one table carries (``fb15k-237-`` of ``fb15k-237-atte``): the names'
    longest common prefix, cut back to end at a separator (``-``, ``_``, ``.``, ``/``, ``:`` or a space); empty
    for a single name or names without such a common start."""
    names = list(dict.fromkeys(str(s) for s in systems))
    common = os.path.commonprefix(names) if len(names) > 1 else ""
    prefix = common[: max(common.rfind(c) for c in SEPARATORS) + 1]
    return prefix if all(len(n) > len(prefix) for n in names) else ""


def match_models(first, second) -> dict[str, str]:
    """The systems of a second dataset's table that stand for a system of the first's, as ``{second: first}``:
    the same model is the same name once each table's :func:`dataset_prefix` is removed (``wn18rr-atte`` is
    ``fb15k-237-atte``), compared regardless of case unless that would merge two systems of one table. Where
    the names as they stand match as many systems, they are kept (``TransE-L1`` and ``TransE-L2`` on both
    datasets, beside a ``RotatE`` on one, share no prefix to remove)."""
    first, second = list(dict.fromkeys(first)), list(dict.fromkeys(second))
    models_a = {s: s[len(dataset_prefix(first)):] for s in first}
    models_b = {s: s[len(dataset_prefix(second)):] for s in second}
    distinct = all(len({m.casefold() for m in ms.values()}) == len(ms) for ms in (models_a, models_b))
    key = str.casefold if distinct else str
    by_model = {key(m): s for s, m in models_a.items()}
    on_model = {s: by_model[key(m)] for s, m in models_b.items() if key(m) in by_model}
    as_named = {s: s for s in second if s in set(first)}
    return as_named if len(as_named) >= len(on_model) else on_model


def _align_second(first: Path, a: pd.DataFrame, second: Path, b: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """The second dataset's table with its systems renamed to the first's (:func:`match_models`), the rows of
    models the first lacks dropped; refused when fewer than two models match (τ needs two)."""
    matched = match_models(a["System"], b["System"])
    prefixes = f"{dataset_prefix(b['System'])!r} here, {dataset_prefix(a['System'])!r} there"
    if len(matched) < 2:
        raise InputError(second, None, f"shares {len(matched)} model(s) with {first} (compared by name, and by "
                                       f"name without the dataset prefix: {prefixes}): τ needs at least two; "
                                       "name the same models alike")
    unmatched = [s for s in b["System"] if s not in matched]
    renamed = any(k != v for k, v in matched.items())
    if unmatched or renamed:
        rule = f"on the name without its dataset prefix ({prefixes})" if renamed else "by name"
        notes.append(f"{second}: {len(matched)} system(s) matched to {first} {rule}"
                     + (f"; left out of the τ across datasets, without a match: {', '.join(unmatched)}"
                        if unmatched else ""))
    return b[b["System"].isin(list(matched))].assign(System=lambda d: d["System"].map(matched))


def _empty_cells(da: pd.DataFrame, db: pd.DataFrame, a: str, b: str, metric: str) -> str:
    """Why a τ is empty: the systems without a value (NaN) of ``metric`` on either side."""
    blank = [f"{name}/{system}" for name, df in ((a, da), (b, db))
             for system, value in zip(df["System"], df[metric]) if not pd.notna(value)]
    return ("no value for " + ", ".join(blank)) if blank else "fewer than two systems, or every value tied"


def _present(folder: Path, names: dict[str, str], roles, file: str) -> dict[str, Path]:
    """Test-set name -> path of ``file`` in the folder of each role that has it, in role order."""
    paths = {names[role]: folder / names[role] / file for role in roles}
    return {name: path for name, path in paths.items() if path.is_file()}


def _figure6(folder: Path, out: Path, names: dict[str, str], system: str, notes: list[str], written: list[str]) -> None:
    per_rel = {name: read_table(path, ("System", "Relation"))
               for name, path in _present(folder, names, ("original", "sample", "complete"), "lp_per_rel.csv").items()}
    if not per_rel:
        notes.append("figure6 skipped: no lp_per_rel.csv")
        return
    rows = []
    for name, df in per_rel.items():
        found = match_system(df["System"], system)
        if found is None or FIG6 not in df.columns:
            notes.append(f"figure6: {name}/lp_per_rel.csv has no system {system!r} or no column {FIG6}")
            continue
        sub = df[df["System"] == found]
        rows.append(pd.DataFrame({"TestSet": name, "System": found, "relation": sub["Relation"], FIG6: sub[FIG6]}))
    if not rows:
        notes.append("figure6 skipped: no test set has the system")
        return
    f6 = pd.concat(rows, ignore_index=True)
    write_csv(f6, out / "figure6.csv")
    figures.figure6(f6, FIG6, system, out / "figure6.png", out / "figure6.pdf")
    medians = f6.groupby("TestSet", sort=False)[FIG6].median()
    notes.append("figure6: median per-relation " + FIG6 + " of " + system + ": "
                 + ", ".join(f"{k} {v:.4f}" for k, v in medians.items()))
    written.append("figure6")


def _figure7(folder: Path, out: Path, names: dict[str, str], notes: list[str], written: list[str]) -> None:
    parts = []
    for name, path in _present(folder, names, ROLES, "stability.csv").items():
        df = read_table(path, ())
        if not {"Metric", "Size", "tau"} <= set(df.columns):
            notes.append(f"figure7: {path} lacks the columns Metric, Size, tau (one row per subsample): skipped")
            continue
        parts.append(df.assign(TestSet=df["TestSet"] if "TestSet" in df else name))
    if not parts:
        notes.append("figure7 skipped: no stability.csv with Metric, Size, tau")
        return
    summary = study.stability_summary(pd.concat(parts, ignore_index=True))
    write_csv(summary, out / "figure7_summary.csv")
    figures.figure7(summary, out / "figure7.png", out / "figure7.pdf")
    written.append("figure7")


def _figure8(folder: Path, out: Path, names: dict[str, str], notes: list[str], written: list[str]) -> None:
    parts = []
    for name, path in _present(folder, names, ROLES, "discriminative_power.csv").items():
        df = read_table(path, ())
        if not ({"SystemA", "SystemB"} <= set(df.columns) or {"Metric", "p"} <= set(df.columns)):
            raise InputError(path, 1, "header lacks SystemA and SystemB (wide) or Metric and p (long)")
        check_pvalues(path, df, [c for c in df.columns if c not in LABEL_COLUMNS])
        parts.append(pvalues_long(df, name))
    if not parts:
        notes.append("figure8 skipped: no discriminative_power.csv")
        return
    long = pd.concat(parts, ignore_index=True)
    long = long[long["Metric"].isin(FIG8_METRICS)]
    if long.empty:
        notes.append(f"figure8 skipped: discriminative_power.csv has none of {FIG8_METRICS}")
        return
    # test sets in role order, metrics in the study's order
    order = {name: i for i, name in enumerate(dict.fromkeys(long["TestSet"]))}
    long = long.assign(_t=long["TestSet"].map(order), _m=long["Metric"].map(FIG8_METRICS.index))
    long = long.sort_values(["_t", "_m"], kind="stable").drop(columns=["_t", "_m"])
    summary = discrimination_summary(long)
    write_csv(summary, out / "figure8_summary.csv")
    figures.figure8(long, out / "figure8.png", out / "figure8.pdf", ALPHA, tests=list(dict.fromkeys(long["Test"])))
    written.append("figure8")
