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
from .protocol import ProtocolError, check_judgment, check_source, judge, wikidata_link
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


def _answer(path, where: str, ann) -> tuple[str, str, str, float | None]:
    """One annotation's label, source, note and seconds, every field checked as the server checks a judgment,
    so that a bad late task is refused before anything is written."""
    if not isinstance(ann, dict) or not isinstance(ann.get("result") or [], list):
        raise InputError(path, None, f"{where}: expected an object with a 'result' list")
    label = source = note = None
    for res in ann.get("result") or []:
        value = res.get("value") if isinstance(res, dict) else None
        name = res.get("from_name") if isinstance(res, dict) else None
        if not isinstance(value, dict):
            raise InputError(path, None, f"{where}: a result without a 'value' object")
        choices, text = value.get("choices"), value.get("text")
        if name == "label" and choices:
            if not isinstance(choices, list) or not isinstance(choices[0], str):
                raise InputError(path, None, f"{where}: 'label' choices: expected a list of strings")
            label = _LABELS.get(choices[0])
            if label is None:
                raise InputError(path, None, f"{where}: choice {choices[0][:40]!r} is not Y, N or can't tell")
        elif name in ("source", "note") and text:
            if not isinstance(text, list) or not isinstance(text[0], str):
                raise InputError(path, None, f"{where}: '{name}' text: expected a list of strings")
            source, note = (text[0], note) if name == "source" else (source, text[0])
    if label is None:
        raise InputError(path, None, f"{where}: no choice in the 'label' control")
    seconds = ann.get("lead_time")
    try:
        seconds = float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None
    except OverflowError:  # an integer beyond any float (10**400): as out of range as the protocol says
        seconds = float("inf")
    try:
        source = check_source(source or "", label)
        check_judgment(label, note or "", seconds)
    except ProtocolError as exc:
        raise InputError(path, None, f"{where}: {exc}") from None
    return label, source, (note or "").strip(), seconds


def _who(ann) -> str:
    by = ann.get("completed_by") if isinstance(ann, dict) else None
    if isinstance(by, dict):
        by = by.get("email") or by.get("id")
    return f"label-studio:{by}"


def _task_item(path, where: str, task, items: dict[str, int]) -> int:
    data = task.get("data") if isinstance(task, dict) else None
    item = items.get(str(data.get("item", ""))) if isinstance(data, dict) else None
    if item is None:
        raise InputError(path, None, f"{where}: data.item is not an item of the campaign")
    if not isinstance(task.get("annotations") or [], list):
        raise InputError(path, None, f"{where}: annotations: expected a list")
    return item


def import_export(conn: sqlite3.Connection, path: str | Path) -> dict[str, int]:
    """Read a Label Studio JSON export into the campaign in one transaction: every task is checked first, and a
    judgment the protocol refuses (an item already judged) rolls back every one, so that a refused file leaves
    the campaign as it was and the corrected file then imports. Returns counts of judgments recorded, tasks
    skipped (no annotation) and extra annotations left."""
    try:
        data = json.loads(read_text(Path(path)))
    except RecursionError:
        raise InputError(path, None, "not a Label Studio export: nested too deeply") from None
    except ValueError as exc:
        raise InputError(path, None, f"not JSON: {exc}") from None
    if not isinstance(data, list):
        raise InputError(path, None, "expected Label Studio's JSON export: a list of tasks")
    items = {r["sheet_item"]: r["id"] for r in conn.execute("SELECT id, sheet_item FROM items")}
    plan, skipped, extra, seen = [], 0, 0, {}
    for t, task in enumerate(data, start=1):
        where = f"task {t}"
        item = _task_item(path, where, task, items)
        if item in seen:
            raise InputError(path, None, f"{where}: the same item as task {seen[item]} (one task per item)")
        seen[item] = t
        anns = [a for a in task.get("annotations") or [] if not (isinstance(a, dict) and a.get("was_cancelled"))]
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
        if third and third[0][1] == "u":
            raise InputError(path, None, f"{where}: the adjudicating annotation says can't tell")
        plan.append((item, answers[:2], third))
    with write(conn):  # all of it or nothing: the writes below join this transaction
        done = _record(conn, path, plan)
    return {"judgments": done, "skipped": skipped, "extra": extra}


def _about(item: int, exc: ProtocolError) -> str:
    """The protocol's refusal, naming the item once."""
    return str(exc) if str(exc).startswith(f"item {item}:") else f"item {item}: {exc}"


def _record(conn: sqlite3.Connection, path, plan: list) -> int:
    people = {r["name"]: r for r in conn.execute("SELECT id, name, role FROM people")}

    def person(name: str, role: str):
        key = name if role == "annotator" else f"{name} (adjudicator)"
        if key not in people:
            try:
                add_person(conn, key, role)  # a token nobody is given: imported people judge through the file only
            except InputError as exc:
                raise InputError(path, None, f"annotator {name[:60]!r}: {exc.problem}") from None
            people[key] = conn.execute("SELECT id, name, role FROM people WHERE name = ?", (key,)).fetchone()
        return people[key]

    done = 0
    for item, pair, third in plan:
        for who, label, source, note, seconds in pair:
            p = person(who, "annotator")
            if not conn.execute("SELECT 1 FROM assignments WHERE item = ? AND person = ?", (item, p["id"])).fetchone():
                try:
                    conn.execute("INSERT INTO assignments (item, person, at) VALUES (?, ?, 0)", (item, p["id"]))
                except sqlite3.IntegrityError:
                    raise InputError(path, None, f"item {item}: already given to two annotators in the "
                                                 "campaign") from None
                conn.execute("UPDATE items SET n_assigned = n_assigned + 1 WHERE id = ?", (item,))
            try:
                judge(conn, p, item, label, source, note, seconds)
            except ProtocolError as exc:
                raise InputError(path, None, _about(item, exc)) from None
            done += 1
        for who, label, source, note, seconds in third:
            try:
                judge(conn, person(who, "adjudicator"), item, label, source, note, seconds)
            except ProtocolError as exc:
                raise InputError(path, None, _about(item, exc)) from None
            done += 1
    return done
