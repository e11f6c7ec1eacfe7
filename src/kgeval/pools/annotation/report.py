"""The merge report (JSON and Markdown): agreement, every resolution, links outside the verified sources."""

from __future__ import annotations

import json
from pathlib import Path


def _md(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _triple(r: dict) -> str:
    """The triple by names with the ids beside them where the report has names (a campaign's), else by ids."""
    if "head_name" not in r:
        return f"{_md(r['head'])} {_md(r['relation'])} {_md(r['tail'])}"
    return (f"{_md(r['head_name'])} ({_md(r['head'])}) {_md(r['relation'])} {_md(r['tail_name'])} "
            f"({_md(r['tail'])})")


def _side(answer: dict) -> str:
    return f"{answer['label']} ({_md(answer['who'])})" if answer.get("who") else answer["label"]


def _report_markdown(rep: dict) -> str:
    kappa = "undefined" if rep["kappa"] is None else f"{rep['kappa']:.4f}"
    out = [f"# Annotation batch {rep['batch']}", "",
           f"- items: {rep['items']}; agreements: {rep['agreements']}; disagreements: {rep['disagreements']}",
           f"- observed agreement p_o = {rep['observed_agreement']:.4f}; chance agreement p_e = "
           f"{rep['chance_agreement']:.4f}; Cohen's kappa = {kappa}",
           f"- labels: A {rep['labels']['A']['Y']} Y / {rep['labels']['A']['N']} N; B {rep['labels']['B']['Y']} Y"
           f" / {rep['labels']['B']['N']} N; final {rep['labels']['final']['Y']} Y / "
           f"{rep['labels']['final']['N']} N"]
    if rep.get("annotators"):  # a campaign's: A and B are sides, each person's answers by name
        out.append("- by annotator: " + "; ".join(f"{_md(name)} {c['Y']} Y / {c['N']} N / {c['u']} can't tell"
                                                  for name, c in rep["annotators"].items()))
        out.append(f"- {rep['sides_note']}")
    out += ["", "## Files", "", "| role | path | SHA-256 |", "|---|---|---|"]
    for role, f in rep["files"].items():
        if f is not None:
            out.append(f"| {role} | {_md(f['path'])} | `{f['sha256']}` |")
    out += ["", "## Disagreements and resolutions", ""]
    if rep["resolutions"]:
        out += ["| item | triple | A | B | adjudicator | final | adjudicator's source |", "|---|---|---|---|---|---|---|"]
        for r in rep["resolutions"]:
            out.append(f"| {_md(r['item'])} | {_triple(r)} | {_side(r['a'])} | {_side(r['b'])} | "
                       f"{_side(r['adjudicator'])} | {r['final']} | {_md(r['adjudicator']['source_link'])} |")
    else:
        out.append("None.")
    out += ["", "## Source links outside the verified-source list", ""]
    if rep["sources_outside_verified_list"]:
        out += ["| who | item | line | link |", "|---|---|---|---|"]
        for u in rep["sources_outside_verified_list"]:
            out.append(f"| {u['who']} | {_md(u['item'])} | {u['line']} | {_md(u['source_link'])} |")
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def _write_report(fh, report: dict, path: str | Path) -> None:
    if Path(path).suffix.lower() in (".md", ".markdown"):
        fh.write(_report_markdown(report))
    else:
        json.dump(report, fh, indent=2, sort_keys=True)
        fh.write("\n")


