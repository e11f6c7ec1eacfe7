"""The evaluated systems beside the study's: ``DIR/summary.md`` and ``DIR/summary.tex``.

One table per test set, one row per system (the study's systems in the order of their ``evaluation.csv``, then
the evaluated ones), the headline metrics as columns. Significance is marked as ranx's comparison reports mark
it: every system has a letter (``#``), and a value carries, as superscript, the letters of the systems it is
significantly better than (paired t-test over the shared items, Holm-corrected over the evaluated system's
comparisons with the study's systems on that metric and test set, α = 0.05; ``kgeval.external.placement``).
Only pairs with an evaluated system are tested here: two study systems never mark each other (the study's own
discriminative-power analysis compares those). The best value of a column is bold, as in ranx. Both files
state the tie policy, the filter sets and each system's run depth.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_open, latex_escape, md_cell
from ..metrics.registry import higher_is_better, label
from .evaluate import DEPTH_NOTE, FILTERS, TIE_POLICY, summary_markdown
from .placement import ALPHA, HEADLINE

STUDY_DEPTH = "all candidates"


def letters(n: int) -> list[str]:
    """a, b, …, z, aa, ab, … (ranx's system letters)."""
    out = []
    for i in range(n):
        s = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def depth_text(meta: dict) -> str:
    if meta["run_complete"] and meta["kind"] != "run":
        return STUDY_DEPTH
    return f"{meta['run_depth']}" + (" (complete)" if meta["run_complete"] else " (cut)")


def beside(table: pd.DataFrame, metas: list[dict], study: dict[str, pd.DataFrame], placement: pd.DataFrame,
           metrics: list[str] = HEADLINE) -> dict[str, tuple[pd.DataFrame, dict[tuple[str, str], str]]]:
    """Per test set: the rows (``#``, ``System``, ``Depth``, the metrics) and the superscript of each
    (system, metric) cell."""
    depth = {(m["System"], m["TestSet"]): depth_text(m) for m in metas}
    out = {}
    for t in dict.fromkeys(table["TestSet"]):
        mine = table[table["TestSet"] == t]
        theirs = study.get(t, pd.DataFrame(columns=["System"]))
        cols = [m for m in metrics if m in mine.columns]
        # a study table does not record run depths; a cut run is the one whose MR it could not report
        study_depth = np.where(np.isfinite(theirs["micro_mr"].to_numpy(dtype=np.float64)), STUDY_DEPTH, "cut run") \
            if "micro_mr" in theirs.columns else "–"
        rows = pd.concat([theirs.reindex(columns=["System"] + cols).assign(Depth=study_depth),
                          mine[["System"] + cols].assign(Depth=[depth[(s, t)] for s in mine["System"]])],
                         ignore_index=True)
        rows.insert(0, "#", letters(len(rows)))
        code = dict(zip(rows["System"], rows["#"]))
        marks: dict[tuple[str, str], str] = {}
        if len(placement):
            sig = placement[(placement["TestSet"] == t) & placement["significant_t"]]
            winner = np.where(sig["better"], sig["System"], sig["Opponent"])
            loser = np.where(sig["better"], sig["Opponent"], sig["System"])
            for w, lo, m in sorted(zip(winner, loser, sig["Metric"]), key=lambda x: code[x[1]]):
                marks[(w, m)] = marks.get((w, m), "") + code[lo]
        out[t] = (rows[["#", "System", "Depth"] + cols], marks)
    return out


def _best(values: pd.Series, column: str) -> float:
    v = values.to_numpy(dtype=np.float64)
    if not np.isfinite(v).any():
        return np.nan
    return np.nanmax(v) if higher_is_better(column) else np.nanmin(v)


def _cells(rows: pd.DataFrame, marks: dict, column: str, bold, sup) -> list[str]:
    best = _best(rows[column], column)
    out = []
    for system, v in zip(rows["System"], rows[column]):
        if v is None or not np.isfinite(v):
            out.append("–")
            continue
        text = f"{v:.4f}"
        out.append((bold(text) if v == best else text) + (sup(marks[(system, column)])
                                                          if (system, column) in marks else ""))
    return out


def beside_markdown(tables: dict, evaluated: list[str]) -> str:
    lines = []
    for t, (rows, marks) in tables.items():
        cols = [c for c in rows.columns if c not in ("#", "System", "Depth")]
        lines += ["", f"### {t}", "", "| # | System | " + " | ".join(label(c) for c in cols) + " | run depth |",
                  "|---|---|" + "---|" * len(cols) + "---|"]
        cells = {c: _cells(rows, marks, c, lambda s: f"**{s}**", lambda s: f"<sup>{s}</sup>") for c in cols}
        for i, (code, system, depth) in enumerate(zip(rows["#"], rows["System"], rows["Depth"])):
            name = f"**{md_cell(system)}**" if system in evaluated else md_cell(system)
            lines.append(f"| {code} | {name} | " + " | ".join(cells[c][i] for c in cols) + f" | {depth} |")
    return "\n".join(lines) + "\n"


_TEX = {"∪": r"$\cup$", "∞": r"$\infty$", "≤": r"$\leq$", "×": r"$\times$", "α": r"$\alpha$", "→": r"$\to$",
        "≥": r"$\geq$"}


def tex_text(text: str) -> str:
    """Plain text for LaTeX: escaped, and the few mathematical characters the notes use as math."""
    out = latex_escape(text)
    for ch, tex in _TEX.items():
        out = out.replace(ch, tex)
    return out


def beside_latex(tables: dict, evaluated: list[str], notes: list[str]) -> str:
    out = ["% kgeval evaluate: the evaluated systems beside the study's (needs \\usepackage{booktabs})"]
    for t, (rows, marks) in tables.items():
        cols = [c for c in rows.columns if c not in ("#", "System", "Depth")]
        cells = {c: _cells(rows, marks, c, lambda s: f"\\textbf{{{s}}}", lambda s: f"$^{{{s}}}$") for c in cols}
        out += ["\\begin{table}[t]", "\\centering", "\\small",
                f"\\caption{{{tex_text(t)}: the evaluated systems (bold names) beside the study's systems. A "
                "superscript lists the systems a value is significantly better than (paired t-test, Holm-corrected, "
                f"$\\alpha = {ALPHA}$); bold values are the best of their column.}}",
                f"\\begin{{tabular}}{{ll{'r' * len(cols)}l}}", "\\toprule",
                "\\# & System & " + " & ".join(tex_text(label(c)) for c in cols) + " & Run depth \\\\", "\\midrule"]
        for i, (code, system, depth) in enumerate(zip(rows["#"], rows["System"], rows["Depth"])):
            name = f"\\textbf{{{tex_text(system)}}}" if system in evaluated else tex_text(system)
            out.append(f"{code} & {name} & " + " & ".join(cells[c][i] for c in cols) + f" & {tex_text(depth)} \\\\")
        out += ["\\bottomrule", "\\end{tabular}", "\\par\\smallskip\\footnotesize",
                " ".join(tex_text(n) for n in notes), "\\end{table}", ""]
    return "\n".join(out)


def significance_note(placed: bool, trials: int) -> str:
    if not placed:
        return ""
    return (f"Superscripts: the letters of the systems a value is significantly better than (paired t-test over "
            f"the items both systems have, answers for micro and questions for macro metrics, Holm-corrected over "
            f"an evaluated system's comparisons with the study's systems per metric and test set, α = {ALPHA}). "
            "Only pairs with an evaluated system are tested. placement.csv also has the randomised Tukey HSD "
            f"({trials:,} trials) over the study's systems and each evaluated one.")


def write_summaries(out: Path, table: pd.DataFrame, metas: list[dict], study: dict[str, pd.DataFrame],
                    placement: pd.DataFrame, extra_md: list[str], repeats: int, trials: int,
                    significance: bool = True, tex_notes: list[str] = ()) -> None:
    """``summary.md`` (the evaluation table of ``kgeval.external.evaluate``, the systems beside the study's,
    ``extra_md`` paragraphs) and ``summary.tex`` (its notes end with ``tex_notes``, e.g. the pair decisions);
    ``significance`` false: a rank-only placement (no tests)."""
    evaluated = list(dict.fromkeys(table["System"]))
    tables = beside(table, metas, study, placement)
    depth_note = (f"{DEPTH_NOTE} Checkpoints, PyKEEN models and the study's models rank every candidate (their "
                  "trec measures read the stored top-K run); a study system marked 'cut run' is a run file whose "
                  "MR its table leaves empty.")
    sig = significance_note(len(placement) > 0 and significance, trials)
    md = summary_markdown(table, metas, repeats)
    md += "\n## Beside the study's systems\n" + beside_markdown(tables, evaluated)
    md += "\n" + "\n\n".join(p for p in [sig, *extra_md] if p) + "\n"
    with atomic_open(out / "summary.md") as fh:
        fh.write(md)
    notes = [f"Ties: {TIE_POLICY}", f"Filters: {FILTERS}", f"Run depth: {depth_note}", sig, *tex_notes]
    with atomic_open(out / "summary.tex") as fh:
        fh.write(beside_latex(tables, evaluated, [n for n in notes if n]))
