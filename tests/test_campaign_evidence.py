"""The judging page's evidence from the graph (kgeval.campaign.evidence) on a hand-built graph whose every type,
fact and known answer is counted by hand, and the live page's numbers a person can trust (kgeval.campaign.live):
intervals cut to the metric's range, no Δ̂ before a judgment bears on the pair, the metric's full name, κ's
reading, the projection of the judgments."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402
from test_campaign import SRC, Campaign, write_sheet  # noqa: E402

from kgeval.campaign import evidence  # noqa: E402
from kgeval.campaign.build import create_campaign  # noqa: E402
from kgeval.campaign.live import kappa_reading, metric_name, metric_range  # noqa: E402
from kgeval.campaign.server import create_app  # noqa: E402
from kgeval.campaign.store import add_person, connect  # noqa: E402
from kgeval.data.kg import KnowledgeGraph  # noqa: E402
from kgeval.pools.annotation.templates import derive_template  # noqa: E402

ENTS = ["/m/f1", "/m/f2", "/m/g1", "/m/g2", "/m/p1", "/m/a1", "/m/g3"]
NAMES = ["Film One", "Film Two", "Genre One", "Genre Two", "Pat", "Award", "Genre Three"]
RELS = ["/film/film/genre", "/film/actor/film", "/award/award_winner/awards"]
F1, F2, G1, G2, P1, A1, G3 = range(7)
TRAIN = [(F1, 0, G1), (F2, 0, G1), (P1, 1, F1), (P1, 1, F2), (F1, 0, G2), (P1, 2, A1)]
VALID = [(F2, 0, G2)]
TEST = [(F2, 0, G3)]
TEMPLATES = {"/film/film/genre": "Is {tail} a genre of {head}?"}


def graph(typed: bool = True) -> KnowledgeGraph:
    kg = KnowledgeGraph("tiny", ENTS, RELS, {"train": np.array(TRAIN), "valid": np.array(VALID),
                                             "test": np.array(TEST)}, entity_names=NAMES)
    if typed:
        kg.relation_domain = ["/film/film", "/film/actor", "/award/award_winner"]
        kg.relation_range = ["/film/film_genre", "/film/film", "/award/award"]
    return kg


def item(h, r, t) -> dict:
    return {"head_id": h, "relation": r, "tail_id": t}


ITEMS = [item("/m/f1", RELS[0], "/m/g3"), item("/m/nope", RELS[0], "/m/g1"), item("/m/p1", RELS[2], "/m/a1")]


def test_types_facts_and_known_answers_counted_by_hand():
    ev = evidence.build(graph(), ITEMS, TEMPLATES)
    assert ev[1] is None  # an entity the graph does not know: no evidence, never a wrong one
    f1, g3 = ev[0]["head"], ev[0]["tail"]
    # Film One: heads genre twice (/film/film ×2), tail of actor-film once (/film/film): one type, 3 facts,
    # the first fact of each relation (rows 0, 2) before the second genre (row 4)
    assert f1 == {"types": ["film (film)"], "n_facts": 3,
                  "facts": ["Is Genre One a genre of Film One?",
                            derive_template(RELS[1]).format(head="Pat", tail="Film One"),
                            "Is Genre Two a genre of Film One?"]}
    assert g3 == {"types": [], "n_facts": 0, "facts": []}  # only in the test split: nothing known
    # the tail question's known answers (train and valid), the head question's none
    assert ev[0]["questions"] == [{"question": "Is … a genre of Film One?", "known": ["Genre One", "Genre Two"],
                                   "count": 2},
                                  {"question": "Is Genre Three a genre of …?", "known": [], "count": 0}]
    # Pat: actor twice, award winner once, most frequent first; the item's own triple is not its other answer
    pat = ev[2]["head"]
    assert pat["types"] == ["actor (film)", "award winner (award)"] and pat["n_facts"] == 3
    assert [q["count"] for q in ev[2]["questions"]] == [0, 0]
    assert ev[2]["tail"]["types"] == ["award (award)"] and ev[2]["tail"]["n_facts"] == 1
    assert evidence.coverage(ev, min_facts=1) == {"items": 3, "facts": pytest.approx(1 / 3),
                                                  "answers": pytest.approx(1 / 3)}
    text = json.dumps(ev)
    assert not any(w in text for w in ("score", "rank", "prior"))  # nothing that would anchor the judge


def test_fact_cap_one_per_relation_first(monkeypatch):
    monkeypatch.setattr(evidence, "N_FACTS", 2)
    ev = evidence.build(graph(), ITEMS[:1], TEMPLATES)
    assert ev[0]["head"]["facts"][1].startswith("For Pat (an actor)")  # the second relation before a 2nd genre
    assert ev[0]["head"]["n_facts"] == 3 and len(ev[0]["head"]["facts"]) == 2


def test_types_from_the_relation_path_without_relation_types():
    ev = evidence.build(graph(typed=False), ITEMS, TEMPLATES)
    assert ev[0]["head"]["types"] == ["film (film)"]  # a head of /film/film/genre is a /film/film
    assert ev[2]["head"]["types"] == ["actor (film)", "award winner (award)"]
    assert ev[2]["tail"]["types"] == []  # the path names no range


def _campaign_on(folder, kg, head_name: str):
    """A one-item campaign (item 7: /m/f1 /film/film/genre /m/g3) on ``kg`` with evidence: its connection."""
    kg.save(folder / "kg.npz")
    sheet = folder / "sheet.tsv"
    sheet.write_text("batch\titem\thead_id\trelation\ttail_id\thead_name\ttail_name\tquestion\tlabel\tsource_link"
                     f"\tnote\nb\t7\t/m/f1\t/film/film/genre\t/m/g3\t{head_name}\tGenre Three\tIs Genre Three a "
                     f"genre of {head_name}?\t\t\t\n")
    (folder / "t.tsv").write_text("relation\ttemplate\tsource\n/film/film/genre\tIs {tail} a genre of {head}?"
                                  "\thand\n")
    create_campaign(folder / "c.db", sheet, kg=folder / "kg.npz", templates=folder / "t.tsv")
    return connect(folder / "c.db")


def test_create_stores_evidence_and_next_serves_it(tmp_path):
    kg = graph()
    conn = _campaign_on(tmp_path, kg, "Film One")
    tok = add_person(conn, "ana", "annotator")
    got = TestClient(create_app(tmp_path / "c.db")).get(f"/api/{tok}/next").json()
    assert got["number"] == "7"  # the sheet's number: the page and its messages name the item by it
    assert got["evidence"] == evidence.build(kg, [item("/m/f1", RELS[0], "/m/g3")], TEMPLATES)[0]


def test_an_items_evidence_is_served_within_its_cap_with_a_note_of_what_was_cut(tmp_path):
    """Issue 60, item 10: a 100 kB entity label made one item's evidence 1.1 MB; each text is now cut to MAX_TEXT
    characters with a note saying how many more were cut, the lists to their caps (the counts the page turns into
    "N more" kept), at create and, for a file created before the cap, when served."""
    long = "L" * 100_000
    names = [long if n in ("Genre One", "Film One") else n for n in NAMES]
    kg = graph()
    kg.entity_names = names
    whole = evidence.build(kg, ITEMS[:1], TEMPLATES)[0]
    assert len(json.dumps(whole)) > 500_000  # as in the issue: the label in every fact and known answer
    cut = evidence.capped(whole)
    keep = evidence.MAX_TEXT - 40
    note = f"… [{100_000 + len('Is  a genre of ?') + 100_000 - keep:,} more characters cut]"
    assert cut["head"]["facts"][0] == "Is " + "L" * (keep - 3) + note
    assert cut["head"]["n_facts"] == 3 and cut["questions"][0]["count"] == 2
    assert cut["questions"][1] == whole["questions"][1]  # "Is Genre Three a genre of …?": short, served whole
    texts = [t for side in ("head", "tail") for key in ("types", "facts") for t in cut[side][key]]
    texts += [t for q in cut["questions"] for t in (q["question"], *q["known"])]
    assert max(len(t) for t in texts) == evidence.MAX_TEXT - 40 + len(note) <= evidence.MAX_TEXT
    assert len(json.dumps(cut, ensure_ascii=False).encode()) < 4_000  # 7 texts here, 34 at most
    many = {"head": {"types": ["t"] * 9, "n_facts": 2, "facts": ["f"] * 12}, "tail": {}, "questions": [
        {"question": "q", "known": ["n"] * 30, "count": 30}] * 5}
    small = evidence.capped(many)
    assert (len(small["head"]["types"]), len(small["head"]["facts"]), small["head"]["n_facts"]) == (
        evidence.N_TYPES, evidence.N_FACTS, 12)  # the page says "7 more known facts"
    assert len(small["questions"]) == 2 and [len(q["known"]) for q in small["questions"]] == [evidence.N_ANSWERS] * 2
    assert small["tail"] == {"types": [], "n_facts": 0, "facts": []}
    assert evidence.capped(cut) == cut  # capped twice (at create, then served): the same

    # a campaign file created before the cap holds the whole body: what the server sends is the capped one
    conn = _campaign_on(tmp_path, kg, "Film")
    assert len(conn.execute("SELECT body FROM evidence").fetchone()[0]) < 4_000  # stored capped
    with conn:
        conn.execute("UPDATE evidence SET body = ?", (json.dumps(whole),))
    tok = add_person(conn, "ana", "annotator")
    reply = TestClient(create_app(tmp_path / "c.db")).get(f"/api/{tok}/next")
    assert reply.json()["evidence"] == cut
    assert len(reply.content) < 4_000


def test_metric_names_and_ranges():
    assert metric_name("P@k", 10) == "P@10" and metric_name("RBP", 10) == "RBP" and metric_name("P@k", None) == "P@k"
    assert metric_range("P@k", 10) == 1.0 and metric_range("RR@k", 5) == 1.0
    assert metric_range("DCG@k", 2) == pytest.approx(1 + 1 / np.log2(3))
    assert metric_range("odd", 10) == np.inf


def test_kappa_reading_says_prevalence():
    """The issue's case: κ −0.09 with 10 of 12 agreements, nearly every answer N."""
    from kgeval.pools.annotation.agreement import cohen_kappa

    a, b = ["N"] * 11 + ["Y"], ["N"] * 10 + ["Y", "N"]
    k = cohen_kappa(a, b)
    assert k == pytest.approx((10 / 12 - 122 / 144) / (1 - 122 / 144))
    line = kappa_reading(k, 12, 10, 1 / 12, 122 / 144)
    assert "10 of 12" in line and "92 % of the answers are N" in line and "85 %" in line and "prevalence" in line
    assert "prevalence" not in kappa_reading(0.8, 10, 9, 0.5, 0.5)


def test_live_cut_to_range_no_estimate_before_a_judgment_and_kappa(tmp_path):
    write_sheet(tmp_path / "sheet.tsv", 3)
    comp = tmp_path / "comparisons.csv"
    comp.write_text("a,b,metric,base,lo,hi,item,c1,c0\n"
                    "S1,S2,P@k,0.1,-5,5,1,3,-2\nS1,S3,P@k,0.2,-1,1,3,0.5,0\n")
    create_campaign(tmp_path / "c.db", tmp_path / "sheet.tsv", comparisons=comp, k=10)
    conn = connect(tmp_path / "c.db")
    tok = {n: add_person(conn, n, r) for n, r in (("ana", "annotator"), ("bo", "annotator"), ("cur", "curator"))}
    client = TestClient(create_app(tmp_path / "c.db"))
    csrf = {n: client.get(f"/api/{t}/session").json()["csrf"] for n, t in tok.items()}
    for who in ("ana", "bo"):
        assert client.get(f"/api/{tok[who]}/next").json()["item"] == 1
        assert client.post(f"/api/{tok[who]}/judge", json={"item": 1, "label": "y", "source": SRC},
                           headers={"X-CSRF-Token": csrf[who]}).status_code == 200
    live = client.get(f"/api/{tok['cur']}/live").json()
    c = {(r["a"], r["b"]): r for r in live["comparisons"]}
    assert c["S1", "S2"]["metric_name"] == "P@10"
    assert c["S1", "S2"]["delta"] == pytest.approx(3.1)  # one draw: base + c1, outside [−1, 1]
    assert (c["S1", "S2"]["low"], c["S1", "S2"]["high"]) == (-1.0, 1.0)  # the sequence's [−5, 5] cut
    assert c["S1", "S3"]["judgments"] == 0 and c["S1", "S3"]["delta"] is None  # not the prior's 0.2
    assert (c["S1", "S3"]["low"], c["S1", "S3"]["high"]) == (-1.0, 1.0) and not c["S1", "S3"]["decided"]
    pr = live["projection"]  # no plan budget in this campaign: no expectation, the projection at 2 per item
    assert "fixed-sample" in live["rule_text"] and (pr["items"], pr["expected"], pr["per_item"]) == (3, None, 2.0)
    assert pr["projected"] == 6.0


def test_kappa_detail_over_http(tmp_path):
    camp = Campaign(tmp_path, n=12)
    for i in range(1, 13):
        la = "y" if i == 12 else "n"
        lb = "y" if i == 11 else "n"
        assert camp.next("ana")["item"] == i and camp.next("bo")["item"] == i
        assert camp.judge("ana", i, la).status_code == 200 and camp.judge("bo", i, lb).status_code == 200
    d = camp.client.get(f"/api/{camp.tokens['cur']}/live").json()["kappa_detail"]
    assert (d["pairs"], d["agree"]) == (12, 10) and d["value"] == pytest.approx(-0.0909, abs=1e-4)
    assert d["chance"] == pytest.approx(122 / 144) and "prevalence" in d["reading"]


def test_judge_brings_the_next_item_when_asked(tmp_path):
    """``"next": true``: the answer's response carries the item ``GET next`` gives after it (one round trip)."""
    camp = Campaign(tmp_path, n=3)
    assert camp.next("ana")["item"] == 1
    r = camp.judge("ana", 1, "n", next=True).json()
    assert r["number"] == "1" and r["next"]["item"] == 2 and r["next"] == camp.next("ana")
    assert "next" not in camp.judge("ana", 2, "n").json()  # not asked: the protocol's reservations as before
