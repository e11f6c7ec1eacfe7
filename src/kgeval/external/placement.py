"""Where an evaluated system stands among the study's systems: its rank per headline metric on every test set
and paired significance against each study system (``DIR/placement.csv`` and ``DIR/placement.png``).

The study's systems are read from the pipeline's results folder: ``results/metrics/<test set>/evaluation.csv``
(one row per system) and the per-item values ``per_answer.parquet`` (micro metrics, one row per answer) and
``per_question.parquet`` (macro and trec metrics, one row per question). Items are matched by key, never by
position: an answer by (``qid``, ``entity``), a question by ``qid``; only the items every system has are
compared (on the same test set that is all of them).

* **rank**: 1 + the number of study systems strictly better on the metric (direction from
  :data:`kgeval.metrics.registry.REGISTRY`), among the study's systems and this one (each evaluated system is
  placed on its own, so placing two systems at once gives each the rank it would get alone);
* **paired t-test** (``analysis.significance.paired_t_pvalues``, equal to ``scipy.stats.ttest_rel``) of the
  system against each study system over the shared items, Holm-corrected over the comparisons of this system
  with the study's systems on one metric and test set;
* **randomised Tukey HSD** (``analysis.significance.tukey_hsd_pvalues``) over the study's systems and this one:
  it controls the family-wise error over all their pairs by itself, so it is not corrected again.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ..analysis.selections import MACRO_STUDY, MICRO_STUDY
from ..analysis.significance import holm, paired_t_pvalues, tukey_hsd_pvalues
from ..errors import InputError
from ..metrics.registry import higher_is_better, label, metric

log = logging.getLogger(__name__)

HEADLINE = MICRO_STUDY + MACRO_STUDY  # micro_mrr, micro_hits@10, macro_mrr, macro_hits@10, map_cut_20, ndcg_cut_20
ITEM_FILES = {"micro": "per_answer.parquet", "macro": "per_question.parquet"}
ITEM_KEYS = {"micro": ["qid", "entity"], "macro": ["qid"]}
ALPHA = 0.05
_CELLS_PER_CHUNK = 4_000_000  # Tukey HSD permutes chunk × items × systems cells at once: keep that near 100 MB


def item_kind(column: str) -> str:
    """``micro`` (one item per answer) or ``macro`` (one per question: macro and trec_eval measures)."""
    return "micro" if metric(column).aggregation == "micro" else "macro"


def study_files(results: str | Path, testsets: list[str]) -> dict[str, dict[str, Path]] | None:
    """The study's files of each test set that has an ``evaluation.csv``; None when ``results`` does not exist.
    An evaluation table without its per-item files is an error naming the missing file."""
    results = Path(results)
    if not results.is_dir():
        return None
    found = {}
    for t in testsets:
        folder = results / "metrics" / t
        files = {"evaluation": folder / "evaluation.csv",
                 **{kind: folder / name for kind, name in ITEM_FILES.items()}}
        if not files["evaluation"].is_file():
            continue
        for kind in ITEM_FILES:
            if not files[kind].is_file():
                raise InputError(files[kind], None, "missing: placement needs the per-item values of the study's "
                                                    "systems beside evaluation.csv (the metric stage writes them)")
        found[t] = files
    return found


def study_systems(files: dict[str, Path]) -> pd.DataFrame:
    df = pd.read_csv(files["evaluation"])
    if "System" not in df.columns:
        raise InputError(files["evaluation"], 1, "no System column: not an evaluation table of the pipeline")
    return df


def name_clashes(names, study) -> list[str]:
    """The study system names in ``study`` that one of ``names`` takes, compared up to case and surrounding or
    repeated whitespace (``'Alpha '`` takes ``Alpha``: a reader of the tables could not tell them apart)."""
    def key(name) -> str:
        return " ".join(str(name).split()).casefold()

    ours = {key(n) for n in names}
    return sorted({str(s) for s in study if key(s) in ours})


def check_names(files: dict[str, dict[str, Path]], names: list[str]) -> None:
    """An evaluated system may not carry a study system's name (its rows would be indistinguishable)."""
    for f in files.values():
        clash = name_clashes(names, study_systems(f)["System"].astype(str))
        if clash:
            raise InputError(f["evaluation"], None, f"system name {clash[0]!r} is also a study system here; "
                                                    "label yours with --name")


def _study_items(path: Path, kind: str, metrics: list[str]) -> pd.DataFrame:
    """The study's per-item values of ``metrics`` (those the file has), one row per item and system."""
    have = set(pq.read_schema(path).names)
    keys = ITEM_KEYS[kind]
    missing = [c for c in keys + ["System"] if c not in have]
    if missing:
        raise InputError(path, None, f"lacks the column(s) {', '.join(missing)} (not a per-item file of the pipeline)")
    df = pd.read_parquet(path, columns=keys + ["System"] + [m for m in metrics if m in have])
    # a reference pack stores qid and System dictionary-encoded (read as categoricals, whose order is the file's)
    # and entity as int32: back to the results' dtypes, so that items sort, and the randomised test permutes, alike
    for c in ("qid", "System"):
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(object)
    if "entity" in df.columns:
        df["entity"] = df["entity"].astype(np.int64)
    return df


def shared_items(study: pd.DataFrame, own: pd.DataFrame, keys: list[str], column: str, systems: list[str],
                 name: str) -> pd.DataFrame:
    """Items × (study systems, then ``name``) of one metric, matched by ``keys``; items some system lacks are
    dropped."""
    wide = study.pivot_table(index=keys, columns="System", values=column, aggfunc="first")
    wide = wide.reindex(columns=systems)
    mine = own.set_index(keys)[column].rename(name)
    return wide.join(mine, how="inner").dropna()


def place(name: str, testset: str, summary: dict[str, float], per_answer: pd.DataFrame,
          per_question: pd.DataFrame, evaluation: pd.DataFrame, items: dict[str, pd.DataFrame],
          metrics: list[str] = HEADLINE, trials: int = 1000, seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    """The placement rows of one evaluated system on one test set: one row per (metric, study system)."""
    systems = list(evaluation["System"].astype(str))
    own_items = {"micro": per_answer, "macro": per_question}
    rows = []
    for col in metrics:
        kind = item_kind(col)
        if col not in evaluation.columns or col not in items[kind].columns or col not in own_items[kind].columns:
            log.info("placement on %s: %s is not in the study's tables, skipped", testset, col)
            continue
        higher = higher_is_better(col)
        value = float(summary.get(col, np.nan))
        theirs = evaluation[col].to_numpy(dtype=np.float64)
        better_than_me = (theirs > value) if higher else (theirs < value)
        rank = 1 + int(better_than_me.sum()) if np.isfinite(value) else np.nan
        t_p = hsd_p = np.full(len(systems), np.nan)
        n_items = 0
        if np.isfinite(value):  # a metric a cut run cannot know (NaN) is ranked and tested nowhere
            X = shared_items(items[kind], own_items[kind], ITEM_KEYS[kind], col, systems, name).to_numpy()
            n_items = len(X)
            if n_items >= 2:
                S = len(systems)
                # the pairs (k, S): study system k against this system, the last column
                i, j, p = paired_t_pvalues(X)
                t_p = p[j == S][np.argsort(i[j == S])]
                chunk = max(1, _CELLS_PER_CHUNK // (n_items * (S + 1)))
                i, j, p = tukey_hsd_pvalues(X, trials, seed, chunk)
                hsd_p = p[j == S][np.argsort(i[j == S])]
        diff = value - theirs
        rows.append(pd.DataFrame({
            "System": name, "TestSet": testset, "Metric": col, "Label": label(col), "higher_is_better": higher,
            "value": value, "rank": rank, "systems": len(systems) + 1, "Opponent": systems, "opponent_value": theirs,
            "difference": diff, "better": np.where(higher, diff > 0, diff < 0), "items": n_items,
            "t_p": t_p, "t_p_holm": holm(t_p), "hsd_p": hsd_p}))
    if not rows:
        return pd.DataFrame()
    out = pd.concat(rows, ignore_index=True)
    out["significant_t"] = out["t_p_holm"] < alpha
    out["significant_hsd"] = out["hsd_p"] < alpha
    return out


def placement_table(evals: dict[tuple[str, str], object], files: dict[str, dict[str, Path]],
                    metrics: list[str] = HEADLINE, trials: int = 1000, seed: int = 0,
                    alpha: float = ALPHA) -> pd.DataFrame:
    """Placement of every evaluated (system, test set) in ``evals`` (``kgeval.metrics.evaluate.Evaluation``) on
    the test sets of ``files`` (``study_files``)."""
    frames = []
    for t, f in files.items():
        evaluation = study_systems(f)
        items = {kind: _study_items(f[kind], kind, metrics) for kind in ITEM_FILES}
        for (name, testset), ev in evals.items():
            if testset == t:
                frames.append(place(name, t, ev.summary, ev.per_answer, ev.per_question, evaluation, items, metrics,
                                    trials, seed, alpha))
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def placement_figure(table: pd.DataFrame, png: str | Path) -> None:
    """One panel per test set: each headline metric a row, the study's systems as grey dots, each evaluated
    system as a coloured diamond labelled with its rank among them (``rank / systems``)."""
    from ..analysis.figures import plt
    from ..io import atomic_path

    testsets = list(dict.fromkeys(table["TestSet"]))
    names = list(dict.fromkeys(table["System"]))
    metrics = list(dict.fromkeys(table["Metric"]))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, len(testsets), figsize=(3.2 * len(testsets) + 0.8, 0.45 * len(metrics) + 1.2),
                             sharey=True, squeeze=False, layout="constrained")
    for ax, t in zip(axes[0], testsets):
        sub = table[table["TestSet"] == t]
        for y, m in enumerate(metrics):
            rows = sub[sub["Metric"] == m]
            if rows.empty:
                continue
            study = rows.drop_duplicates("Opponent")["opponent_value"]
            ax.scatter(study, np.full(len(study), y), s=14, color="0.6", zorder=2,
                       label="study systems" if y == 0 else None)
            for k, name in enumerate(names):
                mine = rows[rows["System"] == name]
                if mine.empty or not np.isfinite(mine["value"].iloc[0]):
                    continue
                off = (k - (len(names) - 1) / 2) * 0.18
                ax.scatter([mine["value"].iloc[0]], [y + off], s=36, marker="D", color=colours[k % len(colours)],
                           zorder=3, label=name if y == 0 else None)
                ax.annotate(f"{int(mine['rank'].iloc[0])}/{int(mine['systems'].iloc[0])}",
                            (mine["value"].iloc[0], y + off), xytext=(0, 6), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, color=colours[k % len(colours)])
        ax.set_title(t, loc="left")
        ax.set_xlabel("value")
        ax.grid(axis="x", color="0.9")
    axes[0][0].set_yticks(range(len(metrics)), [label(m) for m in metrics])
    axes[0][0].invert_yaxis()
    handles, labels_ = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels_, loc="outside lower center", ncols=min(4, len(labels_)))
    fig.suptitle("Placement among the study's systems (label: rank / systems ranked)", x=0.01, ha="left")
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
