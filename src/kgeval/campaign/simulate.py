"""``kgeval campaign simulate``: an oracle judges a campaign through its HTTP API, and the same campaign is
simulated offline; both must decide each comparison at the same judgment.

The oracle answers from known labels (the published judgments: ``head relation tail Y|N``; an item they do not
label is N, as the official evaluation counts it). Two annotators judge every item in serving order (the plan's,
or MTC's as the labels arrive: :func:`kgeval.campaign.exact.served_order`); the second
gives the wrong answer with the set disagreement rate, drawn once per item from the seed (so that the HTTP run's
thread timing cannot change which items disagree); an adjudicator, answering the truth, resolves each
disagreement. With ``rate`` a triple (first, second, adjudicator), each person errs at their own rate or always
answers N (:func:`item_answers`); the result counts the final labels that differ from the oracle's. The offline function reaches the judgment counts by arithmetic (two per item, three with a
disagreement) and shares :func:`kgeval.campaign.live.paths` and :func:`~kgeval.campaign.live.decided_at` with
the live page; the HTTP run reads what the server stored. The campaign file is never changed: the HTTP run works
on a copy in a temporary folder.
"""

from __future__ import annotations

import logging
import socket
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ..errors import KgevalError
from ..judgments.candidates import TOL
from .exact import Exact, decision_rule, served_order
from .live import ALPHA, decided_at, finals, load_comparisons, paths, within
from .store import add_person, connect, meta

SOURCE = "https://en.wikipedia.org/wiki/Special:Search"


def disagreements(n: int, rate: float, seed: int) -> np.ndarray:
    """Per item in serving order: does the second annotator answer wrongly."""
    return np.random.default_rng([seed, 43]).random(n) < rate


def item_answers(truth: np.ndarray, rate, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first annotator's, the second's and the adjudicator's answer to every item (serving order), drawn once
    per item from the seed. ``rate``: the second annotator's error rate (the others never err), or ``(first,
    second, adjudicator)``, each an error rate or ``"N"`` (always answers N: :mod:`kgeval.campaign.errors`)."""
    from .errors import ALWAYS_N, answers

    first, second, adj = (0.0, rate, 0.0) if not isinstance(rate, tuple) else rate
    b = np.zeros_like(truth) if second == ALWAYS_N else truth ^ disagreements(truth.size, float(second), seed)
    return (answers(truth, first, np.random.default_rng([seed, 44])), b.astype(truth.dtype),
            answers(truth, adj, np.random.default_rng([seed, 45])))


def truth_of(conn: sqlite3.Connection, labels: dict[tuple[str, str, str], int]) -> np.ndarray:
    """The oracle's label of every item, in serving order (absent from ``labels``: N)."""
    rows = conn.execute("SELECT head_id, relation, tail_id FROM items ORDER BY pos").fetchall()
    return np.array([labels.get(tuple(r), 0) for r in rows], np.int8)


def offline(conn: sqlite3.Connection, truth: np.ndarray, rate: float, seed: int, alpha: float = ALPHA) -> dict:
    """The decisions of the campaign judged by the oracle, without a server."""
    comps, c1, c0, bears = load_comparisons(conn)
    ids = np.array([r[0] for r in conn.execute("SELECT id FROM items ORDER BY pos")], np.int64)
    a, b, adj = item_answers(truth, rate, seed)
    final = np.where(a == b, a, adj)  # the protocol: agreement, else the adjudicator
    served = np.arange(ids.size)
    if meta(conn).get("order") == "mtc":
        served = served_order(Exact(conn), final)
    counts = np.cumsum(2 + (a != b)[served].astype(int))
    base = np.array([c["base"] for c in comps], float)
    lo, hi = np.array([c["lo"] for c in comps], float), np.array([c["hi"] for c in comps], float)
    _, low, high = paths(base, lo, hi, c1, c0, ids[served], final[served], alpha)
    return _result(comps, _decided(conn, low, high, served, final[served], counts, bears[:, ids[served]]),
                   int(counts[-1]) if counts.size else 0, int((final != truth).sum()))


def _decided(conn: sqlite3.Connection, low, high, items: np.ndarray, labels: np.ndarray, counts,
             bears: np.ndarray) -> list:
    """The live page's rule: the confidence sequence, or the exact bounds in MTC's order (``items`` 0-based).
    ``bears`` (comparisons × final labels in order): whether each label moves the comparison; as on the live
    page, the sequence decides nothing before a comparison's first bearing label (its limits are the prior's)."""
    if decision_rule(conn) == "exact":
        low, high = Exact(conn).paths(items, labels)
        return decided_at(low - TOL, high + TOL, counts)  # as the bounds module: beyond the sums' drift
    # as the live page: the confidence sequence cut to the exact bounds (known where the plan stored them), and
    # nothing decided before a comparison's first bearing label
    b_low, b_high = Exact(conn).paths(items, labels)
    low, high = within(low, high, b_low - TOL, b_high + TOL)
    seen = np.cumsum(bears, 1) > 0
    return decided_at(np.where(seen, low, -np.inf), np.where(seen, high, np.inf), counts)


def _result(comps, at, total, wrong) -> dict:
    return {"comparisons": [{"a": c["a"], "b": c["b"], "metric": c["metric"], "decided_at": k}
                            for c, k in zip(comps, at)], "judgments": total, "wrong_labels": wrong}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def over_http(db: str | Path, truth: np.ndarray, rate: float, seed: int, alpha: float = ALPHA) -> dict:
    """The oracle through a uvicorn server on a loopback port, on a copy of ``db``."""
    import httpx
    import uvicorn

    from .server import create_app

    logging.getLogger("httpx").setLevel(logging.WARNING)  # its INFO lines name the URL, token included
    with tempfile.TemporaryDirectory(prefix="kgeval-campaign-sim-") as tmp:
        copy = Path(tmp) / "campaign.db"
        src = connect(db)
        dst = sqlite3.connect(str(copy))
        src.backup(dst)
        dst.close()
        src.close()
        conn = connect(copy)
        tokens = {who: add_person(conn, f"oracle-{who}", role) for who, role in
                  (("a", "annotator"), ("b", "annotator"), ("adjudicator", "adjudicator"))}
        ids = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY pos")]
        said = {who: dict(zip(ids, x.tolist())) for who, x in zip(("a", "b", "adjudicator"),
                                                                   item_answers(truth, rate, seed))}
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(create_app(copy), host="127.0.0.1", port=port, access_log=False,
                                               log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while not server.started:
                if not thread.is_alive() or time.monotonic() > deadline:
                    raise KgevalError(f"simulate: the server on 127.0.0.1:{port} did not start")
                time.sleep(0.02)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                csrf = {w: http.get(f"/api/{t}/session").json()["csrf"] for w, t in tokens.items()}

                def answer(who: str) -> int | None:
                    item = _ok(http.get(f"/api/{tokens[who]}/next"))["item"]
                    if item is None:
                        return None
                    x = said[who][item]
                    _ok(http.post(f"/api/{tokens[who]}/judge", json={"item": item, "label": "ny"[x],
                                                                    "source": SOURCE if x else "", "seconds": 1},
                                  headers={"X-CSRF-Token": csrf[who]}))
                    return item

                while answer("a") is not None:
                    answer("b")
                    answer("adjudicator")
        finally:
            server.should_exit = True
            thread.join(30)
        comps, c1, c0, bears = load_comparisons(conn)
        order, labels, counts = finals(conn)
        total = conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        base = np.array([c["base"] for c in comps], float)
        lo, hi = np.array([c["lo"] for c in comps], float), np.array([c["hi"] for c in comps], float)
        _, low, high = paths(base, lo, hi, c1, c0, order, labels, alpha)
        at = _decided(conn, low, high, np.searchsorted(ids, order), labels, counts, bears[:, order])
        wrong = int((labels != truth[np.searchsorted(ids, order)]).sum())
        conn.close()
    return _result(comps, at, int(total), wrong)


def _ok(response) -> dict:
    if response.status_code != 200:
        raise KgevalError(f"simulate: {response.request.method} {response.request.url.path.split('/')[-1]}: "
                          f"HTTP {response.status_code}: {response.json().get('error')}")
    return response.json()
