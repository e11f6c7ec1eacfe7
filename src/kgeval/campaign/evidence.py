"""Evidence from the graph for the judging page, offline: per item, each entity's types and a handful of its
known facts (training and validation splits, phrased by the relation templates as the questions are), and the
item's questions' other known answers ("… is … listed under 'produced by'?" known: A, B).

Never a model's score, rank or the prior: they would anchor the judge. Computed once, at ``campaign create``,
into the table ``evidence`` (one JSON body per item) so that serving an item is one primary-key read.

What one item serves is bounded whatever the graph's names (:func:`capped`, at create and when served): at most
:data:`N_TYPES` types and :data:`N_FACTS` facts per entity, :data:`N_ANSWERS` names per question, and each text at
most :data:`MAX_TEXT` characters, a longer one cut with a note of how much was cut (in them): at most 34 texts, about 12 kB
of JSON for Latin text, where a 100 kB entity label made one item's evidence 1.1 MB. A list the cap shortens shows
on the page as "N more known facts" and "and N more", from the counts kept beside it.

Types: the dataset's entity types where it ships them; else derived from the relations' domains and ranges
(``relation_specific.txt``: an entity that heads a fact of relation r is of r's domain type, its tail of r's
range type), the most frequent three; a dataset with neither gets the subject type of the relation path
(``/film/actor/film`` gives its heads ``/film/actor``).
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from ..data.kg import HEAD, TAIL, KnowledgeGraph
from ..data.questions import AnswerIndex, question_key
from ..pools.annotation.templates import _words, relation_question

N_FACTS = 5  # facts shown per entity: enough to tell Troy the city from Troy the film, few enough to read
N_TYPES = 3
N_ANSWERS = 8  # names listed per question; the page gives the count of the rest
MAX_TEXT = 300  # characters of one type, fact, question or name served: a long real name and two in a fact fit
TABLE = "CREATE TABLE IF NOT EXISTS evidence (item INTEGER PRIMARY KEY REFERENCES items (id), body TEXT NOT NULL)"


def type_words(path: str) -> str:
    """``/film/film_genre`` → ``film genre (film)``: the type in words, its Freebase domain after it."""
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2:
        return _words(parts[0]) if parts else ""
    return f"{_words(parts[-1])} ({_words(parts[0])})"


def _ranked(entity: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Per row its rank within its entity under ``order`` (a permutation sorting by entity first)."""
    e = entity[order]
    start = np.r_[0, np.flatnonzero(e[1:] != e[:-1]) + 1]
    rank = np.arange(e.size) - np.repeat(start, np.diff(np.r_[start, e.size]))
    out = np.empty_like(rank)
    out[order] = rank
    return out


def entity_types(kg: KnowledgeGraph, known: np.ndarray, ents: np.ndarray) -> dict[int, list[str]]:
    """The (up to :data:`N_TYPES`) type paths of each entity of ``ents``, most frequent first."""
    if kg.entity_types is not None:
        return {int(e): [kg.entity_types[e]] if kg.entity_types[e] else [] for e in ents}
    if kg.relation_domain is not None:
        dom, rng = np.array(kg.relation_domain, object), np.array(kg.relation_range, object)
    else:  # the relation path's subject type for heads; the range is not in the path
        dom = np.array(["/" + "/".join([s for s in r.split("./")[0].split("/") if s][:2]) for r in kg.relations],
                       object)
        rng = np.full(kg.num_relations, "", object)
    ent = np.concatenate([known[:, 0], known[:, 2]])
    typ = np.concatenate([dom[known[:, 1]], rng[known[:, 1]]])
    keep = np.isin(ent, ents) & (typ != "")
    names, code = np.unique(typ[keep].astype(str), return_inverse=True)
    pairs, counts = np.unique(np.stack([ent[keep], code.reshape(-1)], 1), axis=0, return_counts=True)
    order = np.lexsort((pairs[:, 1], -counts, pairs[:, 0]))  # entity, most frequent, then by name
    rank = _ranked(pairs[:, 0], order)
    out: dict[int, list[str]] = {int(e): [] for e in ents}
    for i in order[rank[order] < N_TYPES]:
        out[int(pairs[i, 0])].append(str(names[pairs[i, 1]]))
    return out


def entity_facts(known: np.ndarray, ents: np.ndarray) -> tuple[dict[int, list[int]], dict[int, int]]:
    """Per entity of ``ents`` the rows of ``known`` shown (up to :data:`N_FACTS`: one per relation before a
    second of any, in the splits' order) and its number of known facts."""
    head, tail = np.isin(known[:, 0], ents), np.isin(known[:, 2], ents)
    rows = np.concatenate([np.flatnonzero(head), np.flatnonzero(tail)])
    ent = np.concatenate([known[head, 0], known[tail, 2]])
    rel = known[rows, 1]
    # a fact's occurrence within (entity, relation): the first fact of every relation ranks before any second
    occ = _ranked(ent * (known[:, 1].max(initial=0) + 1) + rel, np.lexsort((rows, rel, ent)))
    order = np.lexsort((rows, occ, ent))
    rank = _ranked(ent, order)
    shown: dict[int, list[int]] = {int(e): [] for e in ents}
    for i in order[rank[order] < N_FACTS]:
        shown[int(ent[i])].append(int(rows[i]))
    ids, counts = np.unique(ent, return_counts=True)
    total = {int(e): 0 for e in ents} | dict(zip(ids.tolist(), counts.tolist()))
    return shown, total


def build(kg: KnowledgeGraph, items: list[dict], templates: dict[str, str]) -> list[dict | None]:
    """Per item (in the order given) its evidence, or None where the graph does not know its triple's entities
    or relation (a sheet of another dataset)."""
    known = kg.known(("train", "valid"))
    ok = np.array([kg.has_entity(it["head_id"]) and kg.has_entity(it["tail_id"]) and kg.has_relation(it["relation"])
                   for it in items], bool)
    h = np.array([kg.entity_id(it["head_id"]) if k else -1 for it, k in zip(items, ok)], np.int64)
    t = np.array([kg.entity_id(it["tail_id"]) if k else -1 for it, k in zip(items, ok)], np.int64)
    r = np.array([kg.relation_id(it["relation"]) if k else -1 for it, k in zip(items, ok)], np.int64)
    ents = np.unique(np.concatenate([h[ok], t[ok]]))
    types = entity_types(kg, known, ents)
    shown, total = entity_facts(known, ents)
    index = AnswerIndex(known, kg.num_entities, kg.num_relations)
    # the tail question (h, r, ?) and the head question (?, r, t): their known answers, the item's own excepted
    keys = np.concatenate([question_key(np.full(ok.sum(), TAIL), h[ok], r[ok], kg.num_entities, kg.num_relations),
                           question_key(np.full(ok.sum(), HEAD), t[ok], r[ok], kg.num_entities, kg.num_relations)])
    row, answer = index.lookup(keys)
    own = np.concatenate([t[ok], h[ok]])
    keep = answer != own[row]
    row, answer = row[keep], answer[keep]
    counts = np.bincount(row, minlength=keys.size)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    name = kg.display_name

    def entity(e: int) -> dict:
        return {"types": [type_words(x) for x in types[e]], "n_facts": total[e],
                "facts": [relation_question(kg.relations[known[i, 1]], name(known[i, 0]), name(known[i, 2]),
                                            templates) for i in shown[e]]}

    out: list[dict | None] = [None] * len(items)
    m = int(ok.sum())
    for j, i in enumerate(np.flatnonzero(ok)):
        rel = kg.relations[r[i]]
        asks = []
        for q, question in ((j, relation_question(rel, name(h[i]), "…", templates)),
                            (m + j, relation_question(rel, "…", name(t[i]), templates))):
            names = [name(a) for a in answer[first[q]:first[q] + min(counts[q], N_ANSWERS)]]
            asks.append({"question": question, "known": names, "count": int(counts[q])})
        out[i] = {"head": entity(int(h[i])), "tail": entity(int(t[i])), "questions": asks}
    return out


def coverage(evidence: list[dict | None], min_facts: int = 3) -> dict[str, float]:
    """Shares of the items whose two entities both have ≥ ``min_facts`` known facts, and whose questions list
    at least one other known answer (either side)."""
    n = len(evidence)
    facts = sum(1 for e in evidence if e and min(e["head"]["n_facts"], e["tail"]["n_facts"]) >= min_facts)
    answers = sum(1 for e in evidence if e and any(a["count"] > 0 for a in e["questions"]))
    return {"items": n, "facts": facts / n if n else float("nan"), "answers": answers / n if n else float("nan")}


def _cut(text) -> str:
    """``text`` in at most :data:`MAX_TEXT` characters, the note of a cut included (so that a text cut once is
    served as it is stored)."""
    text = str(text)
    if len(text) <= MAX_TEXT:
        return text
    keep = MAX_TEXT - 40  # room for the note: "… [1,234,567,890 more characters cut]" is 37
    return f"{text[:keep]}… [{len(text) - keep:,} more characters cut]"


def capped(body: dict) -> dict:
    """``body`` (one item's evidence) within the served bounds: the lists cut to :data:`N_TYPES`,
    :data:`N_FACTS` and :data:`N_ANSWERS` (their counts ``n_facts`` and ``count`` kept, which the page turns into
    "N more"), and each text to :data:`MAX_TEXT` characters with a note of how many more were cut."""
    def entity(e: dict) -> dict:
        return {"types": [_cut(t) for t in e.get("types", [])[:N_TYPES]],
                "n_facts": max(int(e.get("n_facts", 0)), len(e.get("facts", []))),
                "facts": [_cut(f) for f in e.get("facts", [])[:N_FACTS]]}

    questions = [{"question": _cut(q.get("question", "")),
                  "known": [_cut(n) for n in q.get("known", [])[:N_ANSWERS]],
                  "count": max(int(q.get("count", 0)), len(q.get("known", [])))}
                 for q in body.get("questions", [])[:2]]
    return {"head": entity(body.get("head", {})), "tail": entity(body.get("tail", {})), "questions": questions}


def store(conn: sqlite3.Connection, evidence: list[dict | None]) -> None:
    """Write the evidence of the items (in serving order) into the campaign file."""
    from .store import write

    ids = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY pos")]
    with write(conn):
        conn.execute(TABLE)
        conn.executemany("INSERT INTO evidence VALUES (?, ?)",
                         [(i, json.dumps(capped(e), ensure_ascii=False)) for i, e in zip(ids, evidence)
                          if e is not None])


def read(conn: sqlite3.Connection, item: int) -> dict | None:
    """The item's evidence within the served bounds (:func:`capped`: a file created before them holds it whole),
    or None (no evidence: a campaign created without the graph, or an older file)."""
    try:
        row = conn.execute("SELECT body FROM evidence WHERE item = ?", (item,)).fetchone()
    except sqlite3.OperationalError:  # no such table: created without ``--kg``
        return None
    return None if row is None else capped(json.loads(row[0]))
