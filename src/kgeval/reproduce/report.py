"""The text ``kgeval reproduce`` prints: the one-line verdict first, then the headline metrics per model and test
set side by side, the claims' verdicts side by side, and the environment differences that may explain them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..numerics import expected_mkl_branch
from .compare import Comparison, Side, verdict_word

LABELS = {"micro_mrr": "micro MRR", "macro_mrr": "macro MRR", "micro_hits@10": "micro H@10",
          "macro_hits@10": "macro H@10"}


def headline(cmp: Comparison) -> str:
    """``bit-identical (N artifacts)`` or ``N of M artifacts differ; largest micro MRR change X (model, test set);
    verdicts changed: …``."""
    m = len(cmp.artifacts)
    if cmp.identical:
        return f"bit-identical ({m} artifacts)"
    parts = [f"{len(cmp.differing)} of {m} artifacts differ"]
    if cmp.structural:
        parts[0] += " (and the two sides hold different test sets or systems)"
    if cmp.resized:
        parts[0] += (f"; the test sets differ in size ({', '.join(dict.fromkeys(cmp.resized))}): another dataset "
                     "size or configuration, not a rerun")
    v = cmp.values
    mrr = v[v["metric"] == "micro_mrr"] if v is not None else None
    if mrr is not None and len(mrr):
        i = mrr["difference"].abs().to_numpy().argmax()
        row = mrr.iloc[i]
        parts.append(f"largest micro MRR change {_signed(row['difference'])} ({row['System']}, {row['testset']})")
    else:
        parts.append("no micro MRR in common")
    if cmp.verdicts is None:
        parts.append("verdicts: not compared (no findings on one side)")
    else:
        ch = cmp.verdicts_changed
        parts.append("verdicts changed: " + (", ".join(
            f"claim {r.claim} ({verdict_word(r.theirs)} → {verdict_word(r.ours)})" for r in ch.itertuples())
            if len(ch) else "none"))
    return "; ".join(parts)


def _signed(x: float) -> str:
    return "0" if x == 0 else f"{x:+.3g}"


def values_table(cmp: Comparison) -> list[str]:
    """One block per test set: two rows per model (MRR, Hits@10), micro and macro each as ours | theirs |
    difference (``=`` when the bits agree)."""
    v = cmp.values
    if v is None or v.empty:
        return ["(no test set and system in common)"]
    out = []
    header = ["model", "", "micro ours", "micro theirs", "Δ", "macro ours", "macro theirs", "Δ"]
    for t, block in v.groupby("testset", sort=True):
        rows = []
        for s, g in block.groupby("System", sort=False):
            g = g.set_index("metric")
            for measure in ("mrr", "hits@10"):
                cells = [str(s), LABELS[f"micro_{measure}"].split()[1]]
                for m in (f"micro_{measure}", f"macro_{measure}"):
                    if m in g.index:
                        r = g.loc[m]
                        cells += [f"{r['ours']:.10g}", f"{r['theirs']:.10g}",
                                  "=" if r["identical"] else _signed(r["difference"])]
                    else:
                        cells += ["—", "—", ""]
                rows.append(cells)
        out += [f"{t}:", *_aligned(header, rows), ""]
    return out


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths,
                                                                                                  strict=True)))
            for r in [header, *rows]]


def verdicts_table(cmp: Comparison) -> list[str]:
    if cmp.verdicts is None:
        return [n for n in cmp.notes if n.startswith("verdicts")] or ["verdicts: not compared"]
    rows = [[str(r.claim), _short(r.ours), _short(r.theirs), "CHANGED" if r.changed else ""]
            for r in cmp.verdicts.itertuples()]
    return _aligned(["claim", "ours", "theirs", ""], rows)


def _short(text: str, width: int = 60) -> str:
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


# ---- environment -------------------------------------------------------------------------------------------------
def _flatten(env: dict[str, Any]) -> dict[str, str]:
    """The environment's comparable facts, by a readable key (CPU flags and lock differences summarised)."""
    out: dict[str, str] = {}
    cpu = env.get("cpu") or {}
    out["CPU kind"], out["CPU model"] = str(cpu.get("kind")), str(cpu.get("model"))
    num = env.get("numerics") or {}
    for k, v in (num.get("variables") or {}).items():
        out[k] = "unset" if v is None else str(v)
    for k in ("deterministic_algorithms", "torch_threads", "aten_capability"):
        out[k] = str(num.get(k))
    out["MKL branch in force"] = str(num.get("mkl_branch") or _inferred_branch(env))
    ver = env.get("versions") or {}
    out["python"] = str(ver.get("python"))
    for k, v in (ver.get("packages") or {}).items():
        out[k] = str(v)
    for k in ("mkl", "onednn", "cuda"):
        out[k] = str(ver.get(k))
    for b in ver.get("blas") or []:
        out[f"BLAS {b.get('api')}"] = f"{b.get('version')} ({b.get('architecture')})"
    lock = env.get("lock") or {}
    out["lock sha256"] = str(lock.get("sha256"))[:12] if lock.get("present") else "no lock file"
    differs = lock.get("differs") or {}
    out["packages differing from the lock"] = ", ".join(
        f"{n} {d.get('installed') or 'missing'} (locked {d.get('locked')})" for n, d in differs.items()) or (
        "none" if lock.get("present") else "unknown (no lock)")
    return out


def _flags(env: dict[str, Any]) -> set[str]:
    return set((env.get("cpu") or {}).get("flags") or [])


def _unknown(side: Side) -> str:
    p = side.provenance or {}
    cut = {"cpu": None, "kgeval_commit": 12, "date": 10, "cores": None}
    known = ", ".join(f"{k.removeprefix('kgeval_')} {str(p[k])[:n]}" for k, n in cut.items() if p.get(k))
    return (f"environment of {side.label}: unknown (no manifest.json)"
            + (f"; its provenance.json says {known}" if known else ""))


def environment_lines(cmp: Comparison) -> list[str]:
    """The facts of the two environments that differ (or why they cannot be compared), and the configurations'
    hashes when they differ (then the runs are not reruns of each other)."""
    out = []
    hashes = [(s.manifest or {}).get("config_hash") or (s.provenance or {}).get("config_hash")
              for s in (cmp.ours, cmp.theirs)]
    if all(hashes) and hashes[0] != hashes[1]:
        out.append(f"configuration: differs (config hash {hashes[0][:12]} against {hashes[1][:12]}): different "
                   "settings or dataset sizes, so differences are expected")
    envs = [(s.manifest or {}).get("environment") for s in (cmp.ours, cmp.theirs)]
    if envs[0] is None or envs[1] is None:
        return out + list(dict.fromkeys(_unknown(s) for s, e in zip((cmp.ours, cmp.theirs), envs, strict=True)
                                        if e is None))
    x, y = _flatten(envs[0]), _flatten(envs[1])
    rows = [[k, x.get(k, "—"), y.get(k, "—")] for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
    fx, fy = _flags(envs[0]), _flags(envs[1])
    if fx != fy:
        rows.append(["CPU flags", f"{len(fx - fy)} only here ({', '.join(sorted(fx - fy)[:6])})",
                     f"{len(fy - fx)} only there ({', '.join(sorted(fy - fx)[:6])})"])
    why = _mkl_why(x["MKL branch in force"], y["MKL branch in force"]) or _kind_why(x["CPU kind"], y["CPU kind"])
    if not rows:
        return out + [f"environment: the same ({x['CPU kind']}, {x['CPU model']}; numerical mode "
                      f"{x.get('KGEVAL_NUMERICS', 'unset')}; lock {x['lock sha256']})"]
    return out + _aligned(["environment", "ours", "theirs"], rows) + ([f"why: {why}"] if why else [])


def _inferred_branch(env: dict[str, Any]) -> str:
    """MKL's branch for a manifest written before it was recorded, from its ``MKL_CBWR`` and CPU
    (:func:`kgeval.numerics.expected_mkl_branch`), marked as inferred."""
    cpu = env.get("cpu") or {}
    if not cpu.get("kind") and not cpu.get("vendor"):
        return "not recorded"
    value = ((env.get("numerics") or {}).get("variables") or {}).get("MKL_CBWR")
    intel = cpu.get("vendor") == "GenuineIntel" or str(cpu.get("kind", "")).startswith("Intel")
    return expected_mkl_branch(value, intel) + " (inferred)"


def _mkl_why(ours: str, theirs: str) -> str:
    """The likeliest reason for other bits when MKL ran another branch on each side (docs/guide/numerics.md)."""
    ours, theirs = (b.removesuffix(" (inferred)") for b in (ours, theirs))
    if ours == theirs or "not recorded" in (ours, theirs):
        return ""
    text = (f"MKL ran its {ours} branch here and its {theirs} branch there, so every matrix product (each model's "
            "scoring and training) may round differently.")
    if "AUTO" in (ours.split(",")[0], theirs.split(",")[0]):
        text += (" MKL honours MKL_CBWR=AVX2 on Intel processors only and runs AUTO on others; "
                 "KGEVAL_NUMERICS=portable (MKL_CBWR=COMPATIBLE,STRICT) runs one branch on every kind, but the two "
                 "kinds still differ there in the last bits: compare the findings across kinds.")
    return text


def _kind_why(ours: str, theirs: str) -> str:
    """The reason for other bits on two CPU kinds that ran one MKL branch (docs/guide/numerics.md): measured with
    KGEVAL_NUMERICS=portable on the AMD EPYC and Intel Xeon kinds."""
    if ours == theirs or {ours, theirs} & {"None", "unknown", "Unknown"}:
        return ""
    return (f"the CPU kinds differ ({ours} here, {theirs} there): even on one MKL branch a training's long products "
            "and numpy's kernels round differently on the two kinds, so expect other bits and the same findings.")


def render(cmp: Comparison) -> str:
    """The whole report (see the module's docstring)."""
    lines = [headline(cmp), "", f"ours:   {cmp.ours.label}", f"theirs: {cmp.theirs.label}", ""]
    differ = cmp.differing
    if differ:
        lines += ["artifacts that differ:"] + [f"  {a.name}: {a.note}" for a in differ[:30]]
        if len(differ) > 30:
            lines.append(f"  … and {len(differ) - 30} more")
        lines.append("")
    lines += [f"note: {n}" for n in cmp.notes if not n.startswith("verdicts")]
    lines += ["", "headline metrics per model and test set (Δ = ours − theirs; = : the same bits):"]
    lines += values_table(cmp)
    lines += ["claims' verdicts:"] + verdicts_table(cmp) + [""]
    lines += environment_lines(cmp)
    return "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"


def largest_change(values: pd.DataFrame, metric: str = "micro_mrr") -> float:
    """The largest absolute change of ``metric`` over every model and test set (0 when none is in common)."""
    v = values[values["metric"] == metric]["difference"].abs().to_numpy() if values is not None else np.array([])
    return float(v.max()) if len(v) else 0.0
