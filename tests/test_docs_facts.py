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
