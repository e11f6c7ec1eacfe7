"""Label Studio, for groups who already run it: the campaign's items as Label Studio tasks (JSON) with a
labelling configuration (XML), and a Label Studio export (JSON) read back into the campaign.

In Label Studio the protocol is the group's to keep (its "overlap" setting gives each task to two people);
on import, each task's first two annotations are its two annotators' answers and a third its adjudication when
they disagree, through the same protocol functions as the web server, so that an import gives the same states,
κ and estimates as judging in the browser.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..errors import InputError
from ..limits import read_text
from .protocol import ProtocolError, check_source, judge, wikidata_link
from .store import add_person, write

CONFIG = """<View>
  <Header value="$question"/>
  <Text name="question_text" value="head: $head ($head_id) · relation: $relation · tail: $tail ($tail_id)"/>
  <Choices name="label" toName="question_text" choice="single" required="true" showInline="true">
    <Choice value="Y" hotkey="y"/>
    <Choice value="N" hotkey="n"/>
    <Choice value="can't tell" alias="u" hotkey="u"/>
  </Choices>
  <TextArea name="source" toName="question_text" placeholder="source link (http or https; required for Y)"
            maxSubmissions="1" editable="true"/>
  <TextArea name="note" toName="question_text" placeholder="note" maxSubmissions="1" editable="true"/>
</View>
"""

_LABELS = {"Y": "y", "N": "n", "u": "u", "can't tell": "u"}


def tasks(conn: sqlite3.Connection) -> list[dict]:
    """One task per item, in serving order."""
    return [{"data": {"item": r["sheet_item"], "head_id": r["head_id"], "relation": r["relation"],
                      "tail_id": r["tail_id"], "head": r["head_name"], "tail": r["tail_name"],
                      "question": r["question"], "wikidata": wikidata_link(r["head_id"])}}
            for r in conn.execute("SELECT * FROM items ORDER BY pos")]


def _answer(path, where: str, ann: dict) -> tuple[str, str, str, float | None]:
    label = source = note = None
    for res in ann.get("result") or []:
        value, name = res.get("value") or {}, res.get("from_name")
        if name == "label" and value.get("choices"):
            label = _LABELS.get(value["choices"][0])
            if label is None:
                raise InputError(path, None, f"{where}: choice {value['choices'][0]!r} is not Y, N or can't tell")
        elif name in ("source", "note") and value.get("text"):
            text = str(value["text"][0])
            source, note = (text, note) if name == "source" else (source, text)
    if label is None:
        raise InputError(path, None, f"{where}: no choice in the 'label' control")
    try:
        source = check_source(source or "", label)
    except ProtocolError as exc:
        raise InputError(path, None, f"{where}: {exc}") from None
    seconds = ann.get("lead_time")
    return label, source, note or "", float(seconds) if isinstance(seconds, (int, float)) else None


def _who(ann: dict) -> str:
    by = ann.get("completed_by")
    if isinstance(by, dict):
        by = by.get("email") or by.get("id")
    return f"label-studio:{by}"


def import_export(conn: sqlite3.Connection, path: str | Path) -> dict[str, int]:
    """Read a Label Studio JSON export into the campaign; everything is checked before the first judgment is
    recorded. Returns counts of judgments recorded, tasks skipped (no annotation) and extra annotations left."""
    try:
        data = json.loads(read_text(Path(path)))
    except ValueError as exc:
        raise InputError(path, None, f"not JSON: {exc}") from None
    if not isinstance(data, list):
        raise InputError(path, None, "expected Label Studio's JSON export: a list of tasks")
    items = {r["sheet_item"]: r["id"] for r in conn.execute("SELECT id, sheet_item FROM items")}
    plan, skipped, extra = [], 0, 0
    for t, task in enumerate(data, start=1):
        where = f"task {t}"
        item = items.get(str((task.get("data") or {}).get("item", "")) if isinstance(task, dict) else "")
        if item is None:
            raise InputError(path, None, f"{where}: data.item is not an item of the campaign")
        anns = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
        if not anns:
            skipped += 1
            continue
        answers = [(_who(a), *_answer(path, f"{where}, annotation {i}", a)) for i, a in enumerate(anns, start=1)]
        if len(answers) >= 2 and answers[0][0] == answers[1][0]:
            raise InputError(path, None, f"{where}: both annotations by {answers[0][0]}: two different annotators")
        third = answers[2:3]
        agree = len(answers) >= 2 and answers[0][1] == answers[1][1] != "u"
        if third and agree:
            extra += len(answers) - 2
            third = []
        extra += max(len(answers) - 3, 0)
        plan.append((item, answers[:2], third))
    people = {r["name"]: r for r in conn.execute("SELECT id, name, role FROM people")}

    def person(name: str, role: str):
        key = name if role == "annotator" else f"{name} (adjudicator)"
        if key not in people:
            add_person(conn, key, role)  # a token nobody is given: imported people judge through the file only
            people[key] = conn.execute("SELECT id, name, role FROM people WHERE name = ?", (key,)).fetchone()
        return people[key]

    done = 0
    for item, pair, third in plan:
        for who, label, source, note, seconds in pair:
            p = person(who, "annotator")
            try:
                with write(conn):
                    if not conn.execute("SELECT 1 FROM assignments WHERE item = ? AND person = ?",
                                        (item, p["id"])).fetchone():
                        conn.execute("INSERT INTO assignments (item, person, at) VALUES (?, ?, 0)", (item, p["id"]))
                        conn.execute("UPDATE items SET n_assigned = n_assigned + 1 WHERE id = ?", (item,))
            except sqlite3.IntegrityError:
                raise InputError(path, None, f"item {item}: already given to two annotators in the campaign") from None
            try:
                judge(conn, p, item, label, source, note, seconds)
            except ProtocolError as exc:
                raise InputError(path, None, f"item {item}: {exc}") from None
            done += 1
        for who, label, source, note, seconds in third:
            if label == "u":
                raise InputError(path, None, f"item {item}: the adjudicating annotation says can't tell")
            judge(conn, person(who, "adjudicator"), item, label, source, note, seconds)
            done += 1
    return {"judgments": done, "skipped": skipped, "extra": extra}
