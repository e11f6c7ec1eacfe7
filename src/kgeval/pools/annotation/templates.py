"""Relation templates: the yes/no question a sheet asks about a triple (``annotations/templates.tsv``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...data.kg import KnowledgeGraph
from ...errors import InputError
from .formats import _SUFFIX_RE, TEMPLATE_HEADER, TEMPLATE_SOURCES, _read_sheet, _write_sheet


def _words(segment: str) -> str:
    """A Freebase path segment as words: Freebase's disambiguating suffixes (``_s``, ``_2``) dropped,
    underscores as spaces (``release_date_s`` -> ``release date``, ``rent50_2`` -> ``rent50``)."""
    return _SUFFIX_RE.sub("", segment).replace("_", " ").strip()


def _article(noun: str) -> str:
    first = noun[:1].lower()
    if first in "aeio" or (first == "u" and not noun.lower().startswith(("uni", "us", "use", "util"))):
        return "an"
    return "a"


def derive_template(relation: str) -> str:
    """A yes/no question template derived from a Freebase relation path (the rule for relations without a
    hand-written template).

    The path ``/domain/subject_type/property`` gives the subject type (second-to-last segment) and the
    property (last segment); a CVT path ``/domain/subject_type/property./domain2/mediator_type/mediator_property``
    adds the mediator (compound value type) and its property that leads to the tail. Segments become words
    (underscores as spaces, Freebase's disambiguating suffixes ``_s`` and ``_2`` dropped) and property names are
    quoted as the field names they are:

    * ``/location/country/capital`` -> ``For {head} (a country), is {tail} listed under 'capital'?``
    * ``/film/actor/film./film/performance/special_performance_type`` ->
      ``For {head} (an actor), is {tail} the 'special performance type' of one of its 'film' records
      (performance)?``
    """
    parts = relation.split("./", 1)
    first = [s for s in parts[0].split("/") if s]
    if len(first) < 2:
        raise ValueError(f"relation {relation!r} is not a Freebase path /domain/type/property")
    subject, prop = _words(first[-2]), _words(first[-1])
    who = f"For {{head}} ({_article(subject)} {subject}), is {{tail}}"
    if len(parts) == 1:
        return f"{who} listed under '{prop}'?"
    second = [s for s in parts[1].split("/") if s]
    if len(second) < 2:
        raise ValueError(f"relation {relation!r} has a mediator path without type and property")
    mediator, mprop = _words(second[-2]), _words(second[-1])
    return f"{who} the '{mprop}' of one of its '{prop}' records ({mediator})?"


def check_template(template: str) -> str | None:
    """The problem with a template, or None: it needs ``{head}`` and ``{tail}`` once each and ends with '?'."""
    for ph in ("{head}", "{tail}"):
        if template.count(ph) != 1:
            return f"template must contain {ph} exactly once"
    if not template.endswith("?"):
        return "template must end with '?' (a yes/no question)"
    return None


@dataclass(frozen=True)
class TemplateRow:
    relation: str
    template: str
    source: str
    line: int


def read_template_rows(path: str | Path) -> list[TemplateRow]:
    """Read ``relation <TAB> template <TAB> source`` rows (header required), strictly."""
    header, rows = _read_sheet(path)
    if header != TEMPLATE_HEADER:
        raise InputError(path, 1, f"header must be {TEMPLATE_HEADER}, found {header}")
    out: list[TemplateRow] = []
    seen: dict[str, int] = {}
    for lineno, fields in rows:
        if len(fields) != 3:
            raise InputError(path, lineno, f"expected 3 tab-separated fields, found {len(fields)}")
        rel, tpl, src = fields
        if not rel.startswith("/"):
            raise InputError(path, lineno, f"relation {rel!r} is not a Freebase-style path")
        if rel in seen:
            raise InputError(path, lineno, f"relation {rel} already has a template on line {seen[rel]}")
        problem = check_template(tpl)
        if problem:
            raise InputError(path, lineno, problem)
        if src not in TEMPLATE_SOURCES:
            raise InputError(path, lineno, f"source {src!r} is not one of {TEMPLATE_SOURCES}")
        seen[rel] = lineno
        out.append(TemplateRow(rel, tpl, src, lineno))
    return out


def load_templates(path: str | Path) -> dict[str, str]:
    """``{relation: template}`` from a templates file (``annotations/templates.tsv``)."""
    return {row.relation: row.template for row in read_template_rows(path)}


def write_templates(path: str | Path, hand: Mapping[str, str], relations: Iterable[str]) -> None:
    """Write a templates file: the hand-written templates, and a derived one for every other relation."""
    rows = []
    for rel in sorted(set(relations) | set(hand)):
        tpl, src = (hand[rel], "hand") if rel in hand else (derive_template(rel), "derived")
        problem = check_template(tpl)
        if problem:
            raise ValueError(f"{rel}: {problem}")
        rows.append((rel, tpl, src))
    _write_sheet(path, TEMPLATE_HEADER, rows)


def refresh_templates(path: str | Path, relations: Iterable[str] = ()) -> None:
    """Regenerate the derived rows of a templates file (after a change of ``derive_template``), adding rows
    for ``relations`` it lacks; hand-written rows are kept as they are."""
    rows = read_template_rows(path)
    hand = {r.relation: r.template for r in rows if r.source == "hand"}
    write_templates(path, hand, [r.relation for r in rows] + list(relations))


_PLACEHOLDER_RE = re.compile(r"\{head\}|\{tail\}")


def relation_question(relation: str, head: str, tail: str, templates: Mapping[str, str]) -> str:
    """The relation's question (its template, or a derived one) with ``head`` and ``tail`` in, in one pass: a
    name that itself contains ``{tail}`` or ``{head}`` stays as written. The one filling of a template, for the
    annotation sheets (both names) and the ir_datasets queries ("?" on the asked side)."""
    template = templates.get(relation) or derive_template(relation)
    return _PLACEHOLDER_RE.sub(lambda m: head if m.group(0) == "{head}" else tail, template)


def question(kg: KnowledgeGraph, triple_ids: Sequence[int], templates: Mapping[str, str]) -> str:
    """The yes/no question of a triple (ids), with the entities' display names; a relation without a template
    gets a derived one."""
    h, r, t = (int(x) for x in triple_ids)
    return relation_question(kg.relations[r], kg.display_name(h), kg.display_name(t), templates)


