"""Sampling stage (issue 42): estimates from a judged plan, against the estimator written out by hand, the
effect of one label, the audit of the prior, and bad plans and labels as one-line errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student
from test_sampling import instance

from kgeval.errors import InputError
from kgeval.judgments.items import item_triples
from kgeval.sampling import weights as wt
from kgeval.sampling.checksum import CHECK, row_checks
from kgeval.sampling.estimates import judged_estimates, plan_labels, prior_audit, read_plan_items
from kgeval.sampling.plan import make_plan
from kgeval.sampling.problem import Problem

SYSTEMS = ["a", "b", "c", "d"]


def _judged(metric, budget=25, seed=3):
    cand, *_ = instance(seed=7, S=4, Q=30, k=3, n_ent=8)
    rng = np.random.default_rng(2)
    p = rng.uniform(0.1, 0.9, cand.n_items)
    oracle = (rng.random(cand.n_items) < 0.4).astype(np.int8)
    cols = np.arange(6)
    plan = make_plan(Problem(cand, np.zeros(cand.n_items), metric, mc_draws=16), p, SYSTEMS, cols, budget,
                     seed=seed, metric=metric)
    return cand, p, oracle, cols, plan


def test_linear_estimate_is_the_difference_estimator_by_hand():
    cand, p, oracle, cols, plan = _judged("P@k")
    x = oracle[plan.items]
    est = judged_estimates(cand, p, "P@k", cols, SYSTEMS, plan.items, plan.pi, x)
    d = wt.pair_weights(cand, "P@k")  # every item unknown: no known part
    ds = d[plan.items]
    delta = p @ d + ((x - plan.p) / plan.pi) @ ds
    var = ((1 - plan.pi) * (x - plan.p) ** 2 / plan.pi ** 2) @ (ds * ds)
    units = ((x != plan.p)[:, None] & (ds != 0)).sum(0)
    np.testing.assert_allclose(est["delta"], delta, atol=1e-12)
    np.testing.assert_allclose(est["var"], var, atol=1e-15)
    np.testing.assert_array_equal(est["units"], units)
    half = student.ppf(0.975, units - 1) * np.sqrt(var)
    np.testing.assert_allclose(est["hi"] - est["lo"], 2 * half, atol=1e-12)
    assert list(est["decided"]) == list((delta - half > 0) | (delta + half < 0))
    np.testing.assert_array_equal(est["judgments_used"], (ds != 0).sum(0))  # one sheet item per drawn item here
    assert list(est["A"]) == ["a", "a", "a", "b", "b", "c"] and list(est["B"]) == ["b", "c", "d", "c", "d", "d"]


def test_one_label_moves_the_estimate_by_d_over_pi():
    cand, p, oracle, cols, plan = _judged("P@k")
    x = oracle[plan.items].copy()
    d = wt.pair_weights(cand, "P@k")
    j = int(np.flatnonzero((d[plan.items] != 0).any(1))[0])
    x[j] = 0
    no = judged_estimates(cand, p, "P@k", cols, SYSTEMS, plan.items, plan.pi, x)
    x[j] = 1
    yes = judged_estimates(cand, p, "P@k", cols, SYSTEMS, plan.items, plan.pi, x)
    np.testing.assert_allclose(yes["delta"] - no["delta"], d[plan.items[j]] / plan.pi[j], atol=1e-12)


@pytest.mark.parametrize("metric", ["RR@k", "Success@k"])
def test_question_estimate_by_hand(metric):
    cand, p, oracle, cols, plan = _judged(metric, budget=30)
    x = oracle[plan.items]
    est = judged_estimates(cand, p, metric, cols, SYSTEMS, plan.items, plan.pi, x)
    pos, g = wt.position_items(cand), wt.rank_gains(metric, cand.k)
    a, b = wt.pairs(4)
    truth = np.zeros(cand.n_items)
    truth[plan.items] = x
    m, e = wt.max_metric(pos, g, truth), wt.expected_max_metric(pos, g, p)
    D, mu = (m[a] - m[b]).T, (e[a] - e[b]).T
    q, first = np.unique(cand.item_q[plan.items], return_index=True)
    pq = plan.pi[first]
    delta = (mu.sum(0) + ((D[q] - mu[q]) / pq[:, None]).sum(0)) / cand.n_questions
    var = (((1 - pq) / pq ** 2)[:, None] * (D[q] - mu[q]) ** 2).sum(0) / cand.n_questions ** 2
    np.testing.assert_allclose(est["delta"], delta, atol=1e-12)
    np.testing.assert_allclose(est["var"], var, atol=1e-15)
    with pytest.raises(ValueError, match="not in the plan"):  # a drawn question with one unknown left out
        judged_estimates(cand, p, metric, cols, SYSTEMS, plan.items[1:], plan.pi[1:], x[1:])


def test_question_items_below_a_relevant_item_may_stay_unjudged():
    cand, p, oracle, cols, plan = _judged("RR@k", budget=30)
    x = oracle[plan.items]
    full = judged_estimates(cand, p, "RR@k", cols, SYSTEMS, plan.items, plan.pi, x)
    # the items a judge working down every compared list in rank order never reaches
    lab = np.where(cand.state == -1, 0, cand.state)
    lab[plan.items] = x
    pos = wt.position_items(cand)
    reached = np.unique(pos[wt.open_positions(pos, cand.state == -1, lab, judged=True)])
    skip = ~np.isin(plan.items, reached)
    assert skip.any() and not skip.all()
    part = judged_estimates(cand, p, "RR@k", cols, SYSTEMS, plan.items, plan.pi, np.where(skip, -1, x))
    np.testing.assert_allclose(part["delta"], full["delta"], atol=1e-12)  # D_q is the same: the estimate too
    np.testing.assert_allclose(part["var"], full["var"], atol=1e-15)
    assert (part["judgments_used"] <= full["judgments_used"]).all()
    assert part["judgments_used"].sum() < full["judgments_used"].sum()
    needed = np.flatnonzero(~skip)[0]  # an item a list reaches, left unjudged: refused
    with pytest.raises(ValueError, match="1 drawn items are not judged though a list that ranks them"):
        judged_estimates(cand, p, "RR@k", cols, SYSTEMS, plan.items, plan.pi,
                         np.where(np.arange(x.size) == needed, -1, np.where(skip, -1, x)))
    # the plan writes a question's items together, from the top, with the lists that rank each
    q = cand.item_q[plan.items]
    assert np.unique(q).size == (np.diff(q) != 0).sum() + 1  # each question's items in one run
    best = np.where((cand.ranks[:, plan.items] > 0), cand.ranks[:, plan.items], 99).min(0)
    for qq in np.unique(q):
        assert (np.diff(best[q == qq]) >= 0).all()
    first = plan.lists[0].split()
    assert first and all(int(cand.ranks[SYSTEMS.index(s.split(":")[0]), plan.items[0]]) == int(s.split(":")[1])
                         for s in first)


def test_prior_audit_counts_and_rates():
    plan = pd.DataFrame({"p": [0.2, 0.4, 0.6, 0.8], "audit": [True, False, True, False]})
    tab = prior_audit(plan, np.array([1, 0, 0, 1]))
    assert list(tab["items"]) == ["judged", "audit", "optimal"]
    assert list(tab["n"]) == [4, 2, 2] and list(tab["relevant"]) == [2, 1, 1]
    np.testing.assert_allclose(tab["predicted_rate"], [0.5, 0.4, 0.6])
    np.testing.assert_allclose(tab["observed_rate"], [0.5, 0.5, 0.5])
    np.testing.assert_allclose(tab["observed_se"], [0.25, np.sqrt(0.125), np.sqrt(0.125)])


def _sidecar(tmp_path, drop=None):
    df = pd.DataFrame({"item": [1, 2, 2], "order": [1, 2, 3], "head_id": ["h1", "h2", "h2"],
                       "relation": ["r", "r", "r"], "tail_id": ["t1", "t2", "t2"], "asks": ["tail", "head", "tail"],
                       "pi": [0.5, 0.25, 1.0], "p": [0.1, 0.2, 0.3], "audit": [True, False, False]})
    df[CHECK] = row_checks(df)
    path = tmp_path / "sampling_plan.csv"
    df.drop(columns=drop or []).to_csv(path, index=False)
    return str(path)


def test_bad_plans_and_labels_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match=r"sampling_plan.csv:1: no column pi"):
        read_plan_items(_sidecar(tmp_path, drop=["pi"]))
    path = _sidecar(tmp_path)
    plan = read_plan_items(path)
    assert list(plan["line"]) == [2, 3, 4] and plan["audit"].tolist() == [True, False, False]
    text = open(path).read().replace("0.25", "0", 1)
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    with pytest.raises(InputError, match=r"bad.csv:3: pi '0' is not a number in \(0, 1\]"):
        read_plan_items(str(bad))
    rows = [(("h1", "r", "t1"), "Y", 1), (("h2", "r", "t2"), "N", 2)]
    np.testing.assert_array_equal(plan_labels(plan, path, rows, "labels.txt"), [1, 0, 0])
    with pytest.raises(InputError, match=r"labels.txt:3: triple h9 r t9 is not an item of the plan"):
        plan_labels(plan, path, rows + [(("h9", "r", "t9"), "Y", 3)], "labels.txt")
    with pytest.raises(InputError, match=r"labels.txt:3: triple h1 r t1 is labelled N here but Y on line 1"):
        plan_labels(plan, path, rows + [(("h1", "r", "t1"), "N", 3)], "labels.txt")
    with pytest.raises(InputError, match=r"sampling_plan.csv:3: item h2 r t2 has no judgment in labels.txt"):
        plan_labels(plan, path, rows[:1], "labels.txt")
    # a question plan may leave items unjudged (below a relevant item, checked by the estimate): −1
    np.testing.assert_array_equal(plan_labels(plan, path, rows[:1], "labels.txt", questions=True), [1, -1, -1])


def judged_plan(folder, kg, testset, metric="P"):
    """A plan on three random scorers' top 5 of ``testset`` and its sheet judged by a seeded oracle, as files
    under ``folder``: kg.npz, scores/<system>, plan/ (sidecar and pairs), plan.tsv, labels.txt."""
    from pathlib import Path

    from helpers import random_scorer, run_engine

    from kgeval.sampling.steps import plan_step
    from kgeval.scores.dumps import save_ranking

    folder = Path(folder)
    kg.save(folder / "kg.npz")
    dumps = {}
    for i, name in enumerate(["A", "B", "C"]):
        dumps[name] = str(folder / "scores" / name)
        save_ranking(run_engine(kg, testset, random_scorer(kg, seed=10 + i), k=10), dumps[name], {})
    (folder / "plan").mkdir()
    out = {f: str(folder / f) for f in ("kg.npz", "plan.tsv", "labels.txt", "est.csv", "audit.csv")}
    out["plan.csv"], out["budgets.csv"] = (str(folder / "plan" / f) for f in ("sampling_plan.csv",
                                                                             "sampling_budgets.csv"))
    templates = str(Path(__file__).parents[1] / "annotations/templates.tsv")
    plan_step(dumps, out["kg.npz"], templates, out["plan.tsv"], out["plan.csv"], out["budgets.csv"], k=5,
              metric=metric, budget=40, mc_draws=16, seed=4, max_depth=30, prior="logistic")
    side = pd.read_csv(out["plan.csv"])
    triples = side.drop_duplicates("item")[["head_id", "relation", "tail_id"]]
    oracle = np.random.default_rng(5).random(len(triples)) < 0.3
    with open(out["labels.txt"], "w") as fh:
        for (h, r, t), y in zip(triples.itertuples(index=False), oracle):
            fh.write(f"{h}\t{r}\t{t}\t{'YN'[not y]}\n")
    return dumps, out, side, triples, oracle


@pytest.mark.parametrize("metric", ["P", "RR"])
def test_plan_judged_by_an_oracle_round_trip(pooled, synth_kg, tmp_path, capsys, metric):
    """The plan's sheet judged by an oracle and estimated from the files: the same Δ̂ as the estimator on the
    plan's items, and bad files refused in one line."""
    from kgeval.judgments.universe import from_dumps
    from kgeval.sampling.steps import estimate_step

    dumps, out, side, triples, oracle = judged_plan(tmp_path, synth_kg, pooled[1], metric)
    kg_path = out["kg.npz"]
    assert 10 < len(side) and side["asks"].isin(["head", "tail"]).all()
    est = estimate_step(dumps, str(kg_path), out["plan.csv"], out["budgets.csv"], out["labels.txt"], out["est.csv"],
                        out["audit.csv"], k=5, max_depth=30)
    u = from_dumps(dumps, synth_kg, 5, 30)
    unknown = np.flatnonzero(u.cand.state == -1)
    key = {(synth_kg.entities[h], synth_kg.relations[r], synth_kg.entities[t], int(s)): e for (h, r, t), s, e in
           zip(item_triples(u.items, u.questions, unknown).tolist(), u.questions.side[u.items.q[unknown]], unknown)}
    items = np.array([key[(h, r, t, int(a == "tail"))] for h, r, t, a in
                      zip(side["head_id"], side["relation"], side["tail_id"], side["asks"])])
    x = dict(zip(triples.itertuples(index=False, name=None), oracle.astype(int)))
    xs = np.array([x[t] for t in zip(side["head_id"], side["relation"], side["tail_id"])])
    p = u.pooled_prior()
    np.testing.assert_allclose(p[items], side["p"], rtol=1e-8)
    direct = judged_estimates(u.cand, p, {"P": "P@k", "RR": "RR@k"}[metric], np.arange(3), u.systems, items,
                              side["pi"].to_numpy(), xs)
    np.testing.assert_allclose(est["delta"], direct["delta"], rtol=1e-6, atol=1e-12)
    if metric == "P":
        d = wt.pair_weights(u.cand, "P@k")
        known = np.maximum(u.cand.state, 0) @ d
        unk = u.cand.state == -1
        hand = known + p[unk] @ d[unk] + ((xs - p[items]) / side["pi"].to_numpy()) @ d[items]
        np.testing.assert_allclose(est["delta"], hand, atol=1e-9)
    saved = pd.read_csv(out["est.csv"])
    assert list(saved.columns[:4]) == ["Metric", "A", "B", "delta"] and len(saved) == 3
    audit = pd.read_csv(out["audit.csv"])
    assert audit["n"].iloc[0] == len(side) and audit["relevant"].iloc[0] == xs.sum()
    from kgeval.cli import main

    argv = ["sample-estimate", "--plan", str(tmp_path / "plan"), "--labels", out["labels.txt"], "--scores",
            str(tmp_path / "scores"), "--kg", str(kg_path), "--k", "5", "--max-depth", "30", "--out",
            str(tmp_path / "cli")]
    assert main(argv) == 0
    assert (tmp_path / "cli/estimates.csv").read_bytes() == open(out["est.csv"], "rb").read()
    assert (tmp_path / "cli/prior_audit.csv").read_bytes() == open(out["audit.csv"], "rb").read()
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 4 and printed[-1].endswith(f"{int(est['decided'].sum())} of 3 pairs decided")
    other = side.copy()
    other.loc[2, "p"] = min(1.0, other.loc[2, "p"] + 0.1)  # a plan made with another prior
    other[CHECK] = row_checks(other.drop(columns=CHECK))  # (its own checksum: the prior refit catches it)
    other.to_csv(tmp_path / "other.csv", index=False)
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputError, match=r"empty.csv: cannot read the plan's pairs"):
        estimate_step(dumps, str(kg_path), out["plan.csv"], str(tmp_path / "empty.csv"), out["labels.txt"],
                      out["est.csv"], out["audit.csv"], k=5, max_depth=30)
    with pytest.raises(InputError, match=r"other.csv:4: p .* differs from the prior refitted on the same inputs"):
        estimate_step(dumps, str(kg_path), str(tmp_path / "other.csv"), out["budgets.csv"], out["labels.txt"],
                      out["est.csv"], out["audit.csv"], k=5, max_depth=30)
    with open(out["labels.txt"], "a") as fh:
        fh.write(f"{synth_kg.entities[0]}\t{synth_kg.relations[0]}\t{synth_kg.entities[0]}\tY\n")
    with pytest.raises(InputError, match=rf"labels.txt:{len(triples) + 1}: triple .* is not an item of the plan"):
        estimate_step(dumps, str(kg_path), out["plan.csv"], out["budgets.csv"], out["labels.txt"], out["est.csv"],
                      out["audit.csv"], k=5, max_depth=30)
    before = (tmp_path / "cli/estimates.csv").read_bytes()
    assert main(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "labels.txt" in err[0] and "is not an item of the plan" in err[0]
    assert (tmp_path / "cli/estimates.csv").read_bytes() == before  # nothing replaced


def test_a_sidecar_edited_after_the_plan_is_refused_at_its_line(tmp_path):
    """π = 1e-300 is in range yet moves Δ̂ by d/π: the chained checksum names the edited row; a removed row, a
    swapped p, a dropped checksum column are refused too, and the file as written reads."""
    path = _sidecar(tmp_path)
    assert list(read_plan_items(path)["pi"]) == [0.5, 0.25, 1.0]
    lines = open(path).read().splitlines(keepends=True)
    edits = {"pi": lines[:2] + [lines[2].replace(",0.25,", ",1e-300,")] + lines[3:],
             "p": lines[:3] + [lines[3].replace(",0.3,", ",0.9,")],
             "removed": lines[:3],
             "swapped": [lines[0], lines[2], lines[1], lines[3]]}
    for name, line in (("pi", 3), ("p", 4), ("removed", 2), ("swapped", 2)):
        bad = tmp_path / f"{name}.csv"
        bad.write_text("".join(edits[name]))
        with pytest.raises(InputError, match=rf"{name}.csv:{line}: does not match the plan's checksum"):
            read_plan_items(str(bad))
    with pytest.raises(InputError, match=r"sampling_plan.csv:1: no column plan_sha256"):
        read_plan_items(_sidecar(tmp_path, drop=[CHECK]))


@pytest.mark.parametrize("metric", ["P", "RR"])
def test_a_pi_edited_with_its_checksum_recomputed_is_refused(pooled, synth_kg, tmp_path, capsys, metric):
    """Issue 60 item 8: π = 1e-300 with a recomputed plan_sha256 passes the checksum, yet Δ̂ becomes 1e+295.
    The estimate recomputes every π from the design the sidecar records and the refitted prior: one line naming
    the file, the row and the value, nothing written; a sidecar without the design's columns is refused too."""
    from kgeval.cli import main
    from kgeval.sampling.sheet import DESIGN_COLUMNS

    dumps, out, side, triples, oracle = judged_plan(tmp_path, synth_kg, pooled[1], metric)
    assert set(DESIGN_COLUMNS) <= set(side.columns) and side["budget"].nunique() == 1

    def cli(plan_folder):
        return main(["sample-estimate", "--plan", str(plan_folder), "--labels", out["labels.txt"], "--scores",
                     str(tmp_path / "scores"), "--kg", out["kg.npz"], "--k", "5", "--max-depth", "30", "--out",
                     str(tmp_path / "cli")])

    assert cli(tmp_path / "plan") == 0  # the real plan, untouched, estimates
    capsys.readouterr()
    before = (tmp_path / "cli/estimates.csv").read_bytes()
    row = len(side) // 2
    edits = {"tiny": ("pi", 1e-300), "floor": ("pi", side["pi"].iloc[row] * 0.5),
             "old": ("drop", None), "budget": ("budget", 1e6)}
    if metric == "P":  # the clip moves an item plan's allocation (a question plan's variances are not clipped)
        edits["clip"] = ("p_clip", 0.2)
    else:  # the Monte Carlo's correlation moves a question plan's (an item plan has no Monte Carlo)
        edits["rho"] = ("mc_rho", 0.2)
    for name, (col, value) in edits.items():
        bad = side.drop(columns=CHECK)
        if col == "drop":
            bad = bad.drop(columns=list(DESIGN_COLUMNS))
        elif col in ("budget", "p_clip", "mc_rho"):
            bad[col] = value  # a budget, clip or ρ no plan of these inputs was drawn with: π recomputes otherwise
        else:
            bad.loc[row, col] = value
        bad[CHECK] = row_checks(bad)  # the checksum recomputed on purpose
        folder = tmp_path / f"bad-{name}"
        folder.mkdir()
        bad.to_csv(folder / "sampling_plan.csv", index=False)
        (folder / "sampling_budgets.csv").write_bytes(open(out["budgets.csv"], "rb").read())
        assert cli(folder) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "Traceback" not in err[0], err
        where = f"bad-{name}/sampling_plan.csv:"
        if name == "old":
            assert f"{where}1: no column design" in err[0]
        elif name in ("clip", "rho"):
            assert f"{where}" in err[0] and ": pi " in err[0] and "is not the plan's" in err[0], err[0]
        else:
            line = row + 2 if name != "budget" else 2
            assert f"{where}{line}: pi " in err[0] and "is not the plan's" in err[0], err[0]
            if name == "tiny":
                assert "pi 1e-300 is not the plan's" in err[0]
        assert (tmp_path / "cli/estimates.csv").read_bytes() == before  # no estimate written or replaced


@pytest.mark.parametrize("metric, module, name, col, now, legacy, other, what", [
    ("P", "design", "P_CLIP", "p_clip", 0.003, 0.01, 0.3, "clip"),
    ("RR", "problem", "LABEL_CORRELATION", "mc_rho", 0.5, 0.0, 0.5, "correlation")])
def test_a_plan_drawn_before_plans_recorded_a_setting_still_estimates(pooled, synth_kg, tmp_path, monkeypatch, metric,
                                                                     module, name, col, now, legacy, other, what):
    """A sidecar without ``p_clip`` (an item plan) was drawn with the clip of its day, 0.01; one without ``mc_rho``
    (a question plan) drew its Monte Carlo with independent labels, ρ = 0: its π recomputes with that, so it
    estimates as before. A plan drawn with another value (a clip of 0.3: the tiny prior's p are all inside
    [0.01, 0.99], so only a wide clip moves them; the default ρ = 0.5) and its column dropped is refused, and a
    column with two values is one line naming the row."""
    import importlib

    from kgeval.cli import main
    from kgeval.sampling.sheet import _design_inputs

    mod = importlib.import_module(f"kgeval.sampling.{module}")
    assert (getattr(mod, name), getattr(mod, f"LEGACY_{name}")) == (now, legacy)
    if metric == "P":
        assert judged_plan(tmp_path / "now", synth_kg, pooled[1], metric)[2][col].eq(now).all()

    def without(folder, value):
        monkeypatch.setattr(mod, name, value)
        _, out, side, _, _ = judged_plan(tmp_path / folder, synth_kg, pooled[1], metric)
        monkeypatch.undo()
        assert side[col].eq(value).all()
        old = side.drop(columns=[CHECK, col])
        old[CHECK] = row_checks(old)
        old.to_csv(out["plan.csv"], index=False)
        return main(["sample-estimate", "--plan", str(tmp_path / folder / "plan"), "--labels", out["labels.txt"],
                     "--scores", str(tmp_path / folder / "scores"), "--kg", out["kg.npz"], "--k", "5", "--max-depth",
                     "30", "--out", str(tmp_path / folder / "cli")]), old, out

    rc, old, out = without("old", legacy)
    assert rc == 0 and _design_inputs(old.assign(line=np.arange(2, len(old) + 2)), out["plan.csv"])[col] == legacy
    assert without("other", other)[0] != 0  # its π is not what the legacy value gives
    mixed = old.drop(columns=CHECK).assign(**{col: legacy})
    mixed.loc[3, col] = now
    with pytest.raises(InputError, match=rf"sampling_plan.csv:5: {col} {now}: expected the plan's one {what}"):
        _design_inputs(mixed.assign(line=np.arange(2, len(mixed) + 2)), out["plan.csv"])


def test_the_apis_estimate_checks_the_plans_pi_and_checksum(tmp_path):
    from kgeval import estimate
    from kgeval.api.sampling import SamplingPlan
    from kgeval.errors import BadValueError

    side = pd.read_csv(_sidecar(tmp_path))
    for pi, says in ((1.5, "pi 1.5 is not a number in"), (np.inf, "pi inf is not"), (np.nan, "pi nan is not"),
                     (1e-300, "sheet row 1 does not match the plan's checksum")):
        sheet = side.copy()
        sheet.loc[1, "pi"] = pi
        sp = SamplingPlan("Mine", ["A"], "P", 10, 0.95, pd.DataFrame(), sheet, {})
        with pytest.raises(BadValueError, match=f"^sampling_plan: .*{says}"):
            estimate(sp, tmp_path / "labels.txt")


def test_the_apis_estimate_checks_pi_against_the_design_it_drew(tmp_path):
    """A sheet whose π is edited and its checksum recomputed is refused against the plan's own design."""
    from types import SimpleNamespace

    from kgeval import estimate
    from kgeval.api.sampling import SamplingPlan
    from kgeval.errors import BadValueError

    side = pd.read_csv(_sidecar(tmp_path))
    outside = SimpleNamespace(plan=SimpleNamespace(pi=side["pi"].to_numpy(float)))
    sheet = side.drop(columns=CHECK)
    sheet.loc[1, "pi"] = 1e-300
    sheet[CHECK] = row_checks(sheet)
    sp = SamplingPlan("Mine", ["A"], "P", 10, 0.95, pd.DataFrame(), sheet, {}, outside=outside)
    with pytest.raises(BadValueError, match=r"^sampling_plan: sheet row 1: pi 1e-300 is not the plan's \(0.25,"):
        estimate(sp, tmp_path / "labels.txt")


def test_an_undecided_pair_says_how_many_more_judgments_decide_it(pooled, synth_kg, tmp_path):
    """estimates.csv's more_judgments: NaN on a decided pair; on an undecided one the smallest further budget
    whose expected half-width, the judged labels fixed and the judged items not drawn again, falls below |Δ̂|
    (checked at that budget and one less, by the design's own width: Student's t, like the estimate's)."""
    from scipy.stats import t as student

    from kgeval.judgments.universe import from_dumps
    from kgeval.sampling import design as dz
    from kgeval.sampling.problem import Problem
    from kgeval.sampling.steps import estimate_step

    dumps, out, *_ = judged_plan(tmp_path, synth_kg, pooled[1], "P")
    est = estimate_step(dumps, out["kg.npz"], out["plan.csv"], out["budgets.csv"], out["labels.txt"],
                        out["est.csv"], out["audit.csv"], k=5, max_depth=30)
    assert "more_judgments" in pd.read_csv(out["est.csv"]).columns
    assert est.loc[est["decided"], "more_judgments"].isna().all()
    u = from_dumps(dumps, synth_kg, 5, 30)
    side = pd.read_csv(out["plan.csv"])
    from kgeval.sampling.estimates import read_plan_items
    from kgeval.sampling.sheet import locate_items

    p = u.pooled_prior("logistic")
    items = locate_items(read_plan_items(out["plan.csv"]), out["plan.csv"], u, synth_kg, p)
    rows = pd.read_csv(out["labels.txt"], sep="\t", header=None).itertuples(index=False)
    labels = {tuple(r[:3]): r[3] for r in rows}
    x = np.array([labels[(h, r, t)] == "Y" for h, r, t in zip(side["head_id"], side["relation"], side["tail_id"])])
    q = p.copy()
    q[items] = x
    pb = Problem(u.cand, np.zeros(u.cand.state.size), "P@k")
    v, _ = pb.variances(q)
    a, b = u.cand.pairs
    checked = 0
    for row in est[~est["decided"] & est["more_judgments"].notna()].itertuples(index=False):
        j = int(np.flatnonzero((np.asarray(u.systems)[a] == row.A) & (np.asarray(u.systems)[b] == row.B))[0])
        elig = pb.eligible([j]) & ~np.isin(pb.U, items)
        sub = np.flatnonzero(elig)

        vj = v[sub][:, [j]]

        def width(n, vj=vj):  # Student's t on the expected units bearing on the pair, less one
            pi = dz.design(vj, np.ones(vj.shape[0], bool), n, "optimal", None, 0.1).pi
            return student.ppf(0.975, max(pi[vj[:, 0] > 0].sum() - 1, 1)) * np.sqrt(dz.expected_variance(pi, vj).sum())

        n = int(row.more_judgments)
        assert width(n) < abs(row.delta) <= width(n - 1)
        checked += 1
    assert checked >= 1  # the oracle leaves at least one of the three pairs undecided within reach
