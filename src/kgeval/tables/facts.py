"""The numbers the docs quote, read from the files a run writes (issue 52 §5): ``facts.json`` in a reference pack.

A number typed by hand into a page goes stale at the next run (the README said 338 judgments after the pack had
moved to 334). So a page marks each number it quotes from a run, ``<!--fact:default:walkthrough.plan_expected-->
334<!--/fact-->`` (pack name, then the key in that pack's ``facts.json``), and ``tests/test_docs_facts.py``
fails when the shown number differs from the file. CONTRIBUTING.md describes the convention.

Two groups of facts:

* ``pack``: from the pack itself, written by :func:`kgeval.tables.reference.pack` (the ``pack_reference`` rule):
  the run's date, commit, job count, systems and size, and every study system's micro and macro MRR per test set;
* ``walkthrough``: from ``kgeval evaluate``'s output folder for the docs' example (a popularity run placed on
  FB-Test-S-C against the pack, :func:`walkthrough_facts`), merged in by ``benchmarks/docs_facts.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

FACTS = "facts.json"


def pack_facts(pack_dir: str | Path) -> dict[str, Any]:
    """The facts of a pack folder, from its ``provenance.json`` and each test set's ``evaluation.csv``."""
    folder = Path(pack_dir)
    prov = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    facts: dict[str, Any] = {
        "date": prov["date"][:10], "commit": prov["kgeval_commit"][:7], "jobs": prov["jobs"],
        "cores": prov["cores"], "cpu": prov["cpu"], "size_mb": round(prov["bytes"] / 1e6, 1),
        "systems": max(t["systems"] for t in prov["testsets"].values()), "mrr": {}}
    if "run_times" in prov:  # packs made before the rule read run_times.csv have no times
        times = prov["run_times"]
        facts.update(timed_jobs=times["jobs"], job_min=round(times["job_seconds"] / 60),
                     wall=_hours_minutes(times["wall_seconds"]))
        if "train_seconds" in times:  # packs made before the totals gained the training stage's time
            facts["train_min"] = round(times["train_seconds"] / 60)
    for t in sorted(prov["testsets"]):
        table = pd.read_csv(folder / "metrics" / t / "evaluation.csv").set_index("System")
        facts["mrr"][t] = {s: {"micro": round(float(row["micro_mrr"]), 4), "macro": round(float(row["macro_mrr"]), 4)}
                           for s, row in table.iterrows()}
    return facts


def _hours_minutes(seconds: float) -> str:
    """``2 h 31 min``, as the pages write a run's wall time."""
    h, m = divmod(round(seconds / 60), 60)
    return f"{h} h {m} min" if h else f"{m} min"


def walkthrough_facts(eval_dir: str | Path, decided_dir: str | Path | None = None) -> dict[str, Any]:
    """The docs' example from ``kgeval evaluate``'s folders: ``eval_dir`` places the run against every study
    system, ``decided_dir`` (``--decide-against`` one opponent) plans the sample for that one."""
    folder = Path(eval_dir)
    ev = pd.read_csv(folder / "evaluation.csv").iloc[0]
    place = pd.read_csv(folder / "placement.csv")
    budgets = place.drop_duplicates("Opponent").set_index("Opponent")["P@10_sample_budget"]
    facts: dict[str, Any] = {
        "system": ev["System"], "testset": ev["TestSet"], "micro_mrr": round(float(ev["micro_mrr"]), 4),
        "macro_mrr": round(float(ev["macro_mrr"]), 4), "opponents": int(place["Opponent"].nunique()),
        "expected": {o: int(b) for o, b in budgets.items()},
        "plan_items": len(pd.read_csv(folder / "sampling_plan.csv"))}
    if decided_dir is not None:
        d = Path(decided_dir)
        dplace = pd.read_csv(d / "placement.csv").dropna(subset=["P@10_sample_budget"])
        facts["decide_against"] = str(dplace["Opponent"].iloc[0])
        facts["plan_expected"] = int(dplace["P@10_sample_budget"].iloc[0])
        facts["plan_triples"] = len(pd.read_csv(d / "sampling_plan.csv"))
    return facts


def write_facts(pack_dir: str | Path, walkthrough: dict[str, Any] | None = None) -> dict[str, Any]:
    """``pack_dir/facts.json``: the pack's facts, with ``walkthrough`` (or the file's present walkthrough, which
    a new pack keeps only when it is given again: its numbers belong to the pack they were measured on)."""
    facts = {"pack": pack_facts(pack_dir)}
    if walkthrough is not None:
        facts["walkthrough"] = walkthrough
    path = Path(pack_dir) / FACTS
    path.write_text(json.dumps(facts, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return facts


def lookup(facts: dict[str, Any], key: str) -> Any:
    """``facts["a"]["b"]…`` for the dotted ``key`` ``a.b…``; KeyError naming the key when absent."""
    value: Any = facts
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(key)
        value = value[part]
    return value


def shown_matches(shown: str, value: Any) -> bool:
    """Whether a page's text ``shown`` states ``value``: a number at the page's precision (``1,801``, ``0.1783``,
    ``.178``, ``6.1``), anything else verbatim."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return shown.strip() == str(value)
    text = shown.strip().replace(",", "").replace("\u2009", "")
    try:
        number = float(text)
    except ValueError:
        return False
    decimals = len(text.split(".")[1]) if "." in text else 0
    return round(float(value), decimals) == round(number, decimals)
