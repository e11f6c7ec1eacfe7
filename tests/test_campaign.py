"""kgeval.campaign over HTTP (Starlette's TestClient): the protocol, its isolation and refusals, the pages'
escaping, the store's guarantees and the live page's numbers."""

from __future__ import annotations

import csv
import sqlite3
import stat
import threading

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from kgeval.campaign.build import create_campaign  # noqa: E402
from kgeval.campaign.server import create_app, redact  # noqa: E402
from kgeval.campaign.store import SCHEMA_VERSION, add_person, connect  # noqa: E402
from kgeval.errors import InputError  # noqa: E402

HEADER = ["batch", "item", "head_id", "relation", "tail_id", "head_name", "tail_name", "question", "label",
          "source_link", "note"]
SRC = "https://en.wikipedia.org/wiki/X"


def write_sheet(path, n=6, head_name=lambda i: f"Head {i}"):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(HEADER)
        for i in range(n, 0, -1):  # written backwards: served by item number
            w.writerow(["b1", str(i), f"/m/0h{i}", "/film/film/genre", f"/m/0t{i}", head_name(i), f"Tail {i}",
                        f"Is Tail {i} a genre of {head_name(i)}?", "", "", ""])
    return path


class Campaign:
    def __init__(self, tmp_path, n=6, **kw):
        self.db = tmp_path / "c.db"
        create_campaign(self.db, write_sheet(tmp_path / "sheet.tsv", n, **kw))
        conn = connect(self.db)
        self.tokens = {name: add_person(conn, name, role) for name, role in
                       (("ana", "annotator"), ("bo", "annotator"), ("cy", "annotator"), ("adj", "adjudicator"),
                        ("cur", "curator"))}
        conn.close()
        self.client = TestClient(create_app(self.db))

    def csrf(self, who):
        return self.client.get(f"/api/{self.tokens[who]}/session").json()["csrf"]

    def next(self, who):
        r = self.client.get(f"/api/{self.tokens[who]}/next")
        assert r.status_code == 200, r.text
        return r.json()

    def judge(self, who, item, label, source=None, csrf=None, **kw):
        body = {"item": item, "label": label, "source": SRC if source is None and label == "y" else (source or ""),
                "note": "", "seconds": 3.0} | kw
        return self.client.post(f"/api/{self.tokens[who]}/judge", json=body,
                                headers={"X-CSRF-Token": self.csrf(who) if csrf is None else csrf})

    def undo(self, who):
        return self.client.post(f"/api/{self.tokens[who]}/undo", json={}, headers={"X-CSRF-Token": self.csrf(who)})

    def state(self, item):
        conn = connect(self.db)
        row = conn.execute("SELECT state, final_label, final_by FROM items WHERE id = ?", (item,)).fetchone()
        conn.close()
        return tuple(row)


@pytest.fixture
def camp(tmp_path):
    return Campaign(tmp_path)


def test_order_and_two_annotators_per_item(camp):
    a, b = camp.next("ana"), camp.next("bo")
    assert a["item"] == b["item"] == 1 and a["head_id"] == "/m/0h1" and a["total"] == 6
    assert a["wikidata"] == "https://www.wikidata.org/w/index.php?search=haswbstatement%3AP646%3D%2Fm%2F0h1"
    assert camp.next("cy")["item"] == 2  # item 1 has its two annotators
    assert camp.next("ana")["item"] == 1  # an unfinished item comes back until it is judged
    assert camp.judge("ana", 1, "y").json()["ok"] is True
    assert camp.state(1) == ("open", None, None)
    assert camp.judge("bo", 1, "y").status_code == 200
    assert camp.state(1) == ("final", 1, "agreement")
    assert camp.next("ana")["item"] == 2  # cy holds one place of item 2, ana takes the other
    assert camp.judge("ana", 2, "n").status_code == 200 and camp.judge("cy", 2, "n").status_code == 200
    assert camp.state(2) == ("final", 0, "agreement")


def test_annotator_never_sees_another_answer(camp):
    camp.next("ana"), camp.next("bo")
    assert camp.judge("ana", 1, "y", source="https://secret.example.org/ana", note="ana's note").status_code == 200
    seen = camp.client.get(f"/api/{camp.tokens['bo']}/next").text + camp.client.get(f"/j/{camp.tokens['bo']}").text
    assert "secret.example.org" not in seen and "ana's note" not in seen and "answers" not in seen


def test_conflict_and_cant_tell_go_to_the_adjudicator(camp):
    for item in (1, 2):
        camp.next("ana"), camp.next("bo")
        camp.judge("ana", item, "y", source=f"https://en.wikipedia.org/wiki/A{item}")
        camp.judge("bo", item, "n" if item == 1 else "u", note=f"bo{item}")
    assert camp.state(1)[0] == camp.state(2)[0] == "conflict"
    view = camp.next("adj")
    assert view["item"] == 1
    assert view["answers"] == [{"label": "y", "source": "https://en.wikipedia.org/wiki/A1", "note": ""},
                               {"label": "n", "source": "", "note": "bo1"}]
    assert camp.judge("adj", 1, "u").status_code == 400  # the adjudicator decides
    assert camp.judge("adj", 2, "n").status_code == 200  # any waiting conflict
    assert camp.judge("adj", 1, "y").status_code == 200
    assert camp.state(1) == ("final", 1, "adjudication") and camp.state(2) == ("final", 0, "adjudication")
    assert camp.next("adj")["item"] is None
    assert camp.judge("adj", 3, "n").status_code == 409  # not waiting for adjudication


def test_undo(camp):
    camp.next("ana"), camp.next("bo")
    camp.judge("ana", 1, "y"), camp.judge("bo", 1, "y")
    assert camp.state(1)[0] == "final"
    r = camp.undo("bo")
    assert r.json() == {"undone": 1} and camp.state(1) == ("open", None, None)
    assert camp.next("bo")["item"] == 1  # back to the same person
    assert camp.judge("bo", 1, "n").status_code == 200 and camp.state(1)[0] == "conflict"
    camp.next("adj")
    assert camp.judge("adj", 1, "n").status_code == 200
    assert camp.undo("bo").status_code == 409  # adjudicated: final
    assert camp.undo("ana").status_code == 409
    assert camp.undo("cy").status_code == 409  # nothing to undo
    assert camp.undo("adj").json() == {"undone": 1} and camp.state(1)[0] == "conflict"


def test_refusals(camp):
    camp.next("ana")
    assert camp.judge("ana", 1, "y", csrf="forged").status_code == 403
    r = camp.client.post(f"/api/{camp.tokens['ana']}/judge", json={"item": 1, "label": "n"})
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    assert camp.client.get("/api/not-a-token/next").status_code == 403
    assert camp.client.get("/j/not-a-token").status_code == 403
    assert camp.client.get(f"/api/{camp.tokens['cur']}/next").status_code == 403
    assert camp.client.get(f"/api/{camp.tokens['ana']}/live").status_code == 403
    assert camp.client.get(f"/live/{camp.tokens['ana']}").status_code == 403
    assert camp.judge("ana", 1, "x").status_code == 400
    assert camp.judge("ana", 2, "n").status_code == 409  # not given to ana
    for bad in ("javascript:alert(1)", "data:text/html,<script>", "file:///etc/passwd", "ftp://x.org/a", "x.org"):
        r = camp.judge("ana", 1, "n", source=bad)
        assert r.status_code == 400 and "http" in r.json()["error"], bad
    r = camp.judge("ana", 1, "y", source="")
    assert r.status_code == 400 and "Y answer" in r.json()["error"]
    r = camp.judge("ana", 1, "y", source="https://blog.example.com/x")
    assert r.status_code == 200 and "verified" in r.json()["hint"]
    assert camp.judge("ana", 1, "n").status_code == 409  # already judged by ana
    for body in ([1], "x", {"item": "1", "label": "y"}):
        r = camp.client.post(f"/api/{camp.tokens['bo']}/judge", json=body, headers={"X-CSRF-Token": camp.csrf("bo")})
        assert r.status_code == 400 and list(r.json()) == ["error"]


def test_pages_escape_and_carry_the_contract(tmp_path):
    camp = Campaign(tmp_path, head_name=lambda i: f"<script>alert({i})</script>")
    html = camp.client.get(f"/j/{camp.tokens['ana']}")
    assert html.status_code == 200 and "<script>alert" not in html.text
    csrf = camp.csrf("ana")
    assert f'<meta name="csrf-token" content="{csrf}">' in html.text
    for el in ("question", "head", "tail", "wikidata", "websearch", "source", "note", "progress", "yes", "no",
               "unsure", "submit", "undo", "message"):
        assert f'id="{el}"' in html.text, el
    assert "script-src 'self'" in html.headers["content-security-policy"]
    assert html.headers["referrer-policy"] == "no-referrer"
    live = camp.client.get(f"/live/{camp.tokens['cur']}")
    for el in ("comparisons", "kappa", "rates"):
        assert f'id="{el}"' in live.text
    # the JSON carries the name as data; the page's script writes it with textContent only
    assert camp.next("ana")["head"] == "<script>alert(1)</script>"
    js = camp.client.get("/static/judge.js").text
    assert "innerHTML" not in js and "textContent" in js


def test_session(camp):
    s = camp.client.get(f"/api/{camp.tokens['adj']}/session").json()
    assert s["person"] == "adj" and s["role"] == "adjudicator" and len(s["csrf"]) == 64
    assert s["csrf"] != camp.csrf("ana")


def test_same_item_at_once_gets_two_labels_never_three(tmp_path):
    camp = Campaign(tmp_path, n=1)
    for who in ("ana", "bo"):
        assert camp.next(who)["item"] == 1
    assert camp.next("cy")["item"] is None
    csrf = {w: camp.csrf(w) for w in ("ana", "bo", "cy")}
    barrier, codes = threading.Barrier(3), {}

    def go(who):
        client = TestClient(create_app(camp.db))
        barrier.wait()
        codes[who] = client.post(f"/api/{camp.tokens[who]}/judge", json={"item": 1, "label": "n"},
                                 headers={"X-CSRF-Token": csrf[who]}).status_code

    threads = [threading.Thread(target=go, args=(w,)) for w in ("ana", "bo", "cy")]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert codes == {"ana": 200, "bo": 200, "cy": 409}
    conn = connect(camp.db)
    assert conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 2
    assert camp.state(1) == ("final", 0, "agreement")


def test_store_file_mode_schema_version_and_refusals(tmp_path):
    camp = Campaign(tmp_path)
    assert stat.S_IMODE(camp.db.stat().st_mode) == 0o600
    raw = sqlite3.connect(camp.db)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tokens = [r[0] for r in raw.execute("SELECT token_sha256 FROM people")]
    assert not set(camp.tokens.values()) & set(tokens)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(InputError, match="schema version"):
        connect(camp.db)
    with pytest.raises(InputError, match="already exists"):
        create_campaign(camp.db, tmp_path / "sheet.tsv")
    (tmp_path / "other.db").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(InputError, match="not a kgeval campaign"):
        connect(tmp_path / "other.db")


def test_no_token_in_the_log(camp, caplog):
    caplog.set_level("INFO", logger="kgeval.campaign")
    camp.next("ana")
    camp.client.get(f"/j/{camp.tokens['ana']}")
    assert caplog.records and not any(t in caplog.text for t in camp.tokens.values())
    assert redact("/api/abc123/next") == "/api/…/next"


def test_live_numbers(tmp_path):
    """Two comparisons on three items: the live estimate is the mean of base + c over the final labels, and
    the interval is the confidence sequence's."""
    from kgeval.sampling.sequence import eb_sequence

    camp = Campaign(tmp_path, n=3)
    comp = tmp_path / "comparisons.csv"
    comp.write_text("a,b,metric,base,lo,hi,item,c1,c0\n"
                    "S1,S2,P@10,0.1,-1,1,1,0.3,-0.2\nS1,S2,P@10,0.1,-1,1,3,0.5,0\n"
                    "S1,S3,P@10,0,-2,2,2,1,-1\n")
    db2 = tmp_path / "d.db"
    assert create_campaign(db2, tmp_path / "sheet.tsv", comparisons=comp) == (3, 2)
    conn = connect(db2)
    tok = {n: add_person(conn, n, r) for n, r in (("ana", "annotator"), ("bo", "annotator"), ("cur", "curator"))}
    client = TestClient(create_app(db2))
    csrf = {n: client.get(f"/api/{t}/session").json()["csrf"] for n, t in tok.items()}
    for label, item in (("y", 1), ("n", 2), ("y", 3)):
        for who in ("ana", "bo"):
            assert client.get(f"/api/{tok[who]}/next").json()["item"] == item
            r = client.post(f"/api/{tok[who]}/judge", json={"item": item, "label": label, "source": SRC,
                                                             "seconds": 6 if who == "ana" else 12},
                            headers={"X-CSRF-Token": csrf[who]})
            assert r.status_code == 200
    live = client.get(f"/api/{tok['cur']}/live").json()
    assert live["final"] == 3 and live["total"] == 3 and live["kappa"] == 1.0
    assert live["rates"] == {"ana": 600.0, "bo": 300.0}
    y1 = np.array([0.1 + 0.3, 0.1 + 0.0, 0.1 + 0.5])
    lo, hi = eb_sequence(y1, -1, 1)
    c = {(r["a"], r["b"]): r for r in live["comparisons"]}
    assert c["S1", "S2"]["delta"] == pytest.approx(y1.mean())
    assert (c["S1", "S2"]["low"], c["S1", "S2"]["high"]) == pytest.approx((lo[-1], hi[-1]))
    assert c["S1", "S2"]["judgments"] == 2 and c["S1", "S2"]["expected"] == 0
    assert c["S1", "S3"]["delta"] == pytest.approx((0 + 0 + 0) / 3 + (-1) / 3)
