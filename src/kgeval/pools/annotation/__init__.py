"""The annotation round trip for newly pooled triples (paper, Sec. 3.1; protocol in ``annotations/PROTOCOL.md``).

1. ``export_batch`` turns pooled triples into a spreadsheet-friendly sheet (UTF-8 TSV with a header row), one
   row per triple with a yes/no question made from a relation template (``annotations/templates.tsv``) and
   the entities' display names; the columns ``label``, ``source_link`` and ``note`` are left empty.
2. Two annotators fill in copies of the sheet independently. ``read_annotations`` validates a completed sheet
   strictly: every problem is an ``InputError`` naming the file and the 1-based line.
3. ``export_disagreements`` writes the adjudication sheet: the items on which the two annotators disagree,
   with both answers alongside. A third annotator labels exactly those items.
4. ``merge`` validates all files before writing anything, resolves each item (agreement: that label;
   disagreement: the adjudicator's), and writes the judgments as published ``head relation tail Y|N`` lines
   (readable by ``kgeval.data.labels.read_labels``) plus a report with Cohen's kappa and every resolution.
5. ``merge_into_qrels`` appends the new judgments to an existing published-format judgments file, refusing a
   triple that is labelled differently in the two files.

Sheets may be edited in any spreadsheet: rows may be re-ordered (items are matched by their ``item`` number),
the display columns (names, question) are not checked, a UTF-8 byte-order mark and CRLF line endings are
accepted, fields are stripped of surrounding whitespace, and fields quoted by the spreadsheet (a note with a
tab or a double quote) are read back as written.
"""

from .adjudication import MergeResult, export_disagreements, merge, plan_merge
from .agreement import cohen_kappa, disagreements
from .formats import (
    ADJUDICATION_HEADER,
    CONTEXT_COLUMNS,
    EXPORT_HEADER,
    TEMPLATE_HEADER,
    TEMPLATE_SOURCES,
    VERIFIED_SOURCES,
    Triple,
)
from .qrels import merge_into_qrels
from .sheets import BatchRow, Judgment, export_batch, read_annotations, read_export, read_triple_list
from .templates import (
    TemplateRow,
    check_template,
    derive_template,
    load_templates,
    question,
    read_template_rows,
    refresh_templates,
    write_templates,
)

__all__ = [
    "ADJUDICATION_HEADER", "BatchRow", "CONTEXT_COLUMNS", "EXPORT_HEADER", "Judgment", "MergeResult",
    "TEMPLATE_HEADER", "TEMPLATE_SOURCES", "TemplateRow", "Triple", "VERIFIED_SOURCES", "check_template",
    "cohen_kappa", "derive_template", "disagreements", "export_batch", "export_disagreements",
    "load_templates", "merge", "merge_into_qrels", "plan_merge", "question", "read_annotations",
    "read_export", "read_template_rows", "read_triple_list", "refresh_templates", "write_templates"
]
