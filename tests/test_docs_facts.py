"""Numbers on the pages come from the files a run writes (issue 52 §5): every ``<!--fact:PACK:KEY-->shown
<!--/fact-->`` of README.md and docs/ states ``reference/PACK/facts.json``'s KEY at the page's precision, and each
pack's facts.json is what kgeval.tables.facts reads from the pack's own files today."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT

from kgeval.tables.facts import lookup, pack_facts, shown_matches

MARK = re.compile(r"<!--fact:(?P<pack>[\w-]+):(?P<key>[^>]+?)-->(?P<shown>.*?)<!--/fact-->", re.S)
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "reference/README.md",
         *sorted((ROOT / "docs").rglob("*.md"))]


def marks():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in MARK.finditer(text):
            yield page.relative_to(ROOT), text.count("\n", 0, m.start()) + 1, m["pack"], m["key"], m["shown"]


def test_every_quoted_fact_equals_its_file():
    found = list(marks())
    assert len(found) >= 10  # the pages do quote facts: an empty scan would prove nothing
    facts = {}
    wrong = []
    for page, line, pack, key, shown in found:
        if pack not in facts:
            facts[pack] = json.loads((ROOT / "reference" / pack / "facts.json").read_text(encoding="utf-8"))
        try:
            value = lookup(facts[pack], key)
        except KeyError:
            wrong.append(f"{page}:{line}: {pack}:{key} is not in reference/{pack}/facts.json")
            continue
        if not shown_matches(shown, value):
            wrong.append(f"{page}:{line}: shows {shown!r}, reference/{pack}/facts.json has {key} = {value!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("pack", ["default", "smoke"])
def test_each_packs_facts_are_read_from_its_files(pack):
    stored = json.loads((ROOT / "reference" / pack / "facts.json").read_text(encoding="utf-8"))
    assert stored["pack"] == json.loads(json.dumps(pack_facts(ROOT / "reference" / pack)))
    prov = json.loads((ROOT / "reference" / pack / "provenance.json").read_text(encoding="utf-8"))
    assert stored["pack"]["date"] == prov["date"][:10] and prov["kgeval_commit"].startswith(stored["pack"]["commit"])


def test_shown_numbers_match_at_the_pages_precision():
    assert shown_matches("1,801", 1801) and not shown_matches("1,768", 1801)
    assert shown_matches("0.1783", 0.17828) and shown_matches(".178", 0.17828) and not shown_matches("0.1782", 0.17828)
    assert shown_matches("334", 334) and not shown_matches("338", 334)
    assert shown_matches("2026-11-27", "2026-11-27") and not shown_matches("2026-11-25", "2026-11-27")
    assert not shown_matches("many", 3)
    assert lookup({"a": {"b": 2}}, "a.b") == 2
    with pytest.raises(KeyError):
        lookup({"a": {"b": 2}}, "a.c")


def test_a_packs_run_times_become_facts(tmp_path):
    """pack_reference reads the run's run_times.csv (its total rows) into the provenance; the facts then give
    the wall time as the pages write it and the summed job time in minutes."""
    from kgeval.errors import InputError
    from kgeval.tables.steps import run_time_totals

    csv = tmp_path / "run_times.csv"
    csv.write_text("stage,rule,jobs,seconds,vs_wall\ntraining,train,12,11900.0,\ntraining,train_kp,3,100.4,\ntotal,jobs,298,15420.4,\n"
                   "total,wall,298,9088.0,\ntotal,2 cores,300,9000.0,0.99\n")
    times = run_time_totals(csv)
    assert times == {"jobs": 298, "job_seconds": 15420.4, "wall_seconds": 9088.0, "train_seconds": 12000.4}
    (tmp_path / "metrics" / "T").mkdir(parents=True)
    (tmp_path / "metrics" / "T" / "evaluation.csv").write_text("System,micro_mrr,macro_mrr\nA,0.123456,0.5\n")
    prov = {"date": "2026-11-27T02:29:52Z", "kgeval_commit": "8985266abc", "jobs": 298, "cores": 2, "cpu": "AMD",
            "bytes": 6092077, "testsets": {"T": {"systems": 1}}}
    (tmp_path / "provenance.json").write_text(json.dumps(prov))
    assert "wall" not in pack_facts(tmp_path)  # an older pack: no times, no facts about them
    (tmp_path / "provenance.json").write_text(json.dumps(dict(prov, run_times=times)))
    facts = pack_facts(tmp_path)
    # 9,088 s = 151.5 min -> 2 h 31 min; 15,420 s = 257.0 min; 12,000.4 s of training = 200.0 min
    assert (facts["wall"], facts["job_min"], facts["timed_jobs"], facts["train_min"]) == ("2 h 31 min", 257, 298, 200)
    assert facts["mrr"]["T"]["A"] == {"micro": 0.1235, "macro": 0.5}
    csv.write_text("stage,rule,jobs,seconds\ntraining,train,1,3.0\n")
    with pytest.raises(InputError, match="no total row"):
        run_time_totals(csv)


# measurements of benchmarks, kept as the files they wrote (docs/dev/measured/, a README there says which run,
# machine and commit wrote each): <!--measured:FILE:KEY-->shown<!--/measured--> states FILE's KEY, a dotted path
# into a .json (list items by index), ``COLUMN=VALUE,…:COLUMN`` of the one matching row of a .tsv/.csv, or the
# value of a .txt's "KEY: value" line
MEASURED = re.compile(r"<!--measured:(?P<file>[^:>]+):(?P<key>[^>]+?)-->(?P<shown>.*?)<!--/measured-->", re.S)
MEASURED_DIR = ROOT / "docs" / "dev" / "measured"


def measured_value(path, key: str):
    if path.suffix == ".txt":  # "label: value" lines, as /usr/bin/time -v writes them
        for line in path.read_text(encoding="utf-8").splitlines():
            label, sep, value = line.strip().rpartition(": ")
            if sep and label == key:
                return value
        raise KeyError(key)
    if path.suffix == ".json":
        value = json.loads(path.read_text(encoding="utf-8"))
        for part in key.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return value
    import pandas as pd

    table = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")
    where, _, column = key.rpartition(":")
    rows = table
    for cond in filter(None, where.split(",")):
        col, _, val = cond.partition("=")
        rows = rows[rows[col].astype(str) == val]
    if len(rows) != 1:
        raise KeyError(f"{key}: {len(rows)} rows match")
    value = rows[column].iloc[0]
    return value.item() if hasattr(value, "item") else value


def test_every_quoted_measurement_equals_its_file():
    wrong, found = [], 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in MEASURED.finditer(text):
            found += 1
            where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
            path = MEASURED_DIR / m["file"]
            try:
                value = measured_value(path, m["key"])
            except (OSError, KeyError, IndexError, ValueError) as e:
                wrong.append(f"{where}: {m['file']}:{m['key']} not found ({e})")
                continue
            if not shown_matches(m["shown"], value):
                wrong.append(f"{where}: shows {m['shown']!r}, {m['file']} has {m['key']} = {value!r}")
    assert found >= 5  # the scale guide quotes its measurements this way: an empty scan would prove nothing
    assert not wrong, "\n".join(wrong)


def test_measured_values_are_read_by_key(tmp_path):
    (tmp_path / "a.json").write_text('{"x": {"y": [1.5, {"z": 7}]}}')
    (tmp_path / "b.tsv").write_text("s\tjob\n12.5\tgraph\n30.26\trank\n")
    assert measured_value(tmp_path / "a.json", "x.y.1.z") == 7
    assert measured_value(tmp_path / "b.tsv", "job=rank:s") == 30.26
    with pytest.raises(KeyError):
        measured_value(tmp_path / "b.tsv", "job=none:s")
    assert shown_matches("30.3", measured_value(tmp_path / "b.tsv", "job=rank:s"))
    (tmp_path / "t.txt").write_text("\tElapsed (wall clock) time (h:mm:ss or m:ss): 11:02.15\n\tExit status: 0\n")
    assert measured_value(tmp_path / "t.txt", "Elapsed (wall clock) time (h:mm:ss or m:ss)") == "11:02.15"
    assert measured_value(tmp_path / "t.txt", "Exit status") == "0"
