"""Sampled judgments for an outside system (``kgeval evaluate --decide-against`` / ``--judgments``,
``kgeval.sampling.outside``): through the command on the tiny fixtures, with an oracle filling the sheet, and on
the real data (a popularity run against ComplEx from the shipped reference pack)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, needs_mirror
from helpers import random_scorer, write_run
from test_evaluate_pairs import POOLED, STUDY, study_with_dumps  # noqa: F401  (the study fixture)

from kgeval.cli import main as cli_main
from kgeval.data.questions import load_questions
from kgeval.scores.dumps import load_dump


def _evaluate(workdir, synth_kg, tmp_path, results, *extra, out="eval", rc=0):
    runs = tmp_path / "Mine"
    if not runs.is_dir():
        runs.mkdir()
        qs = load_questions(workdir / f"resources/testsets/{POOLED}.questions.tsv", synth_kg)
        write_run(runs / f"{POOLED}.run", synth_kg, qs, random_scorer(synth_kg, seed=7, ties=False), depth=20)
    assert cli_main(["evaluate", str(runs), "--dataset", "Synth", "--out", str(tmp_path / out), "--config",
                   str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
                   "--resources", str(workdir / "resources"), "--testsets", POOLED, "--bootstrap", "20",
                   "--results", str(results), "--tukey-trials", "20", *extra]) == rc
    return tmp_path / out


def _oracle(kg, sheet: pd.DataFrame) -> pd.DataFrame:
    """Labels for every triple of the sheet: Y when it is a fact of the graph (any split), else N."""
    names = np.asarray(kg.entities, dtype=object)
    rels = np.asarray(kg.relations, dtype=object)
    facts = {(names[h], rels[r], names[t]) for h, r, t in kg.known().tolist()}
    lab = ["Y" if (h, r, t) in facts else "N" for h, r, t in zip(sheet["head_id"], sheet["relation"],
                                                               sheet["tail_id"])]
    return pd.DataFrame({"h": sheet["head_id"], "r": sheet["relation"], "t": sheet["tail_id"], "label": lab})


def _exact_delta(workdir, synth_kg, out, results, opponent, oracle: pd.DataFrame, metric: str, k: int = 10):
    """Δ = M(Mine) − M(opponent) over the questions with a relevant judgment, every unjudged entry of the two top
    k lists labelled by the oracle (an independent count from the lists, not through kgeval.sampling). An entry
    the sheet leaves out must not matter: Δ is the same with it relevant and with it not."""
    mine = load_dump(out / "dumps" / "Mine" / POOLED)
    theirs = load_dump(results / "scores" / POOLED / opponent)
    j = mine.judged  # every pool depth (tiny.yaml's pooling.depth 10 covers them)
    names = np.asarray(synth_kg.entities, dtype=object)
    rels = np.asarray(synth_kg.relations, dtype=object)
    qs = mine.questions
    judged = {(int(q), int(e)): int(lab) for q, e, lab in zip(j.q, j.entity, j.label)}
    fact = {(h, r, t): lab == "Y" for h, r, t, lab in oracle.itertuples(index=False)}
    keep = sorted({q for (q, _), lab in judged.items() if lab == 1})

    def value(dump, missing):
        per_q = []
        for q in keep:
            labels = []
            for e in dump.run_entity[q, :k]:
                if (q, int(e)) in judged:
                    labels.append(judged[(q, int(e))])
                    continue
                known = names[qs.entity[q]]
                trip = (names[e], rels[qs.relation[q]], known) if qs.side[q] == 0 else \
                    (known, rels[qs.relation[q]], names[e])
                labels.append(int(fact[trip]) if trip in fact else missing)
            labels = np.array(labels)
            per_q.append(labels.mean() if metric == "P" else
                         (1.0 / (1 + np.argmax(labels)) if labels.any() else 0.0))
        return np.mean(per_q)

    deltas = [value(mine, m) - value(theirs, m) for m in (0, 1)]
    assert deltas[0] == pytest.approx(deltas[1], abs=1e-12)  # the census holds every label that matters
    return deltas[0]


@pytest.mark.parametrize("metric", ["P", "RR"])
def test_census_plan_judged_by_an_oracle_gives_the_exact_difference(workdir, synth_kg, study_with_dumps,  # noqa: F811
                                                                    tmp_path, metric):
    """A budget above every unknown of the compared lists draws each with π = 1: Δ̂ is then the exact difference
    under the oracle's labels, with a zero-width interval; the plan only names the opponents asked for."""
    args = ("--decide-against", "Beta", "--sample-metric", metric, "--sample-budget", "100000")
    out = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, *args)
    side = pd.read_csv(out / "sampling_plan.csv")
    assert (side["pi"] == 1).all() and side["order"].tolist() == list(range(1, len(side) + 1))
    sheet = pd.read_csv(out / "sampling_plan.tsv", sep="\t", dtype=str)
    assert sheet["item"].astype(int).tolist() == list(range(1, side["item"].nunique() + 1))
    oracle = _oracle(synth_kg, sheet)
    labels = tmp_path / "merged.labels.txt"
    oracle.to_csv(labels, sep="\t", header=False, index=False)
    out2 = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, *args, "--judgments", str(labels), out="eval2")
    pl = pd.read_csv(out2 / "placement.csv").drop_duplicates("Opponent").set_index("Opponent")
    col = f"{metric}@10_sample"
    assert np.isnan(pl.loc["Alpha", f"{col}_delta"])  # not asked for
    want = _exact_delta(workdir, synth_kg, out2, study_with_dumps, "Beta", oracle, metric)
    assert pl.loc["Beta", f"{col}_delta"] == pytest.approx(want, abs=1e-9)
    assert pl.loc["Beta", f"{col}_lo"] == pytest.approx(want, abs=1e-9)
    assert pl.loc["Beta", f"{col}_hi"] == pytest.approx(want, abs=1e-9)
    assert bool(pl.loc["Beta", f"{col}_decided"]) == (abs(want) > 1e-12)
    assert pl.loc["Beta", f"{col}_judgments"] == side["item"].nunique()
    summary = (out2 / "summary.md").read_text()
    assert f"Beta Δ̂ {want:+.4f} [{want:+.4f}, {want:+.4f}]" in summary


def test_a_sample_estimates_by_the_difference_estimator(workdir, synth_kg, study_with_dumps, tmp_path):  # noqa: F811
    """A small budget: Δ̂ = E_p[Δ] + Σ_drawn d_e (x_e − p_e)/π_e (item sampling on P@10), checked from the
    sidecar's π and p, the exact census difference and the census's E_p[Δ] (independent of which items are
    drawn); every opponent gets a budget."""
    out = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", "6")
    pl = pd.read_csv(out / "placement.csv").drop_duplicates("Opponent").set_index("Opponent")
    assert pl.loc[list(STUDY), "P@10_sample_expected_delta"].notna().all()  # every opponent by default
    assert (pl["P@10_sample_plan_budget"] == 6).all()
    side = pd.read_csv(out / "sampling_plan.csv")
    assert 0 < len(side) and (side["pi"] < 1).all()
    sheet = pd.read_csv(out / "sampling_plan.tsv", sep="\t", dtype=str)
    labels = tmp_path / "merged.labels.txt"
    _oracle(synth_kg, sheet).to_csv(labels, sep="\t", header=False, index=False)
    out2 = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", "6", "--judgments",
                     str(labels), out="eval2")
    pl2 = pd.read_csv(out2 / "placement.csv").drop_duplicates("Opponent").set_index("Opponent")
    mine = load_dump(out2 / "dumps" / "Mine" / POOLED)
    x = _oracle(synth_kg, sheet).set_index(["h", "r", "t"])["label"].eq("Y")
    keep = np.unique(mine.judged.q[mine.judged.label == 1]).size
    for opp in STUDY:
        other = load_dump(study_with_dumps / "scores" / POOLED / opp)
        qid = {q: i for i, q in enumerate(mine.questions.qid)}
        correction = 0.0
        for row in side.itertuples(index=False):
            # d_e = (1[e in Mine's top 10] − 1[e in opp's top 10]) / (10 Q): the question the row asks
            hit = []
            for dump in (mine, other):
                q = _question_of(dump, synth_kg, row, qid)
                ent = row.head_id if row.asks == "head" else row.tail_id
                hit.append(synth_kg.entities.index(ent) in dump.run_entity[q, :10].tolist())
            d = (hit[0] - hit[1]) / (10 * keep)
            correction += d * (x.loc[(row.head_id, row.relation, row.tail_id)] - row.p) / row.pi
        assert pl2.loc[opp, "P@10_sample_delta"] == pytest.approx(pl.loc[opp, "P@10_sample_expected_delta"]
                                                                  + correction, abs=1e-9), opp
        assert pl2.loc[opp, "P@10_sample_lo"] <= pl2.loc[opp, "P@10_sample_delta"] <= pl2.loc[opp, "P@10_sample_hi"]
    # an undecided opponent: the judgments that would decide it at this estimate, in placement.csv and in words
    more, dec = pl2["P@10_sample_more_judgments"], pl2["P@10_sample_decided"].astype(bool)
    assert (~dec).any() and more[dec].isna().all() and (more[~dec].dropna() > 0).all()
    summary = (out2 / "summary.md").read_text()
    for opp in pl2.index[~dec]:
        if np.isfinite(more[opp]):
            assert f"{opp} Δ̂ {pl2.loc[opp, 'P@10_sample_delta']:+.4f}" in summary
            assert f"undecided — about {int(more[opp]):,} more judgment" in summary, opp
    # the second look the summary offers: a larger budget, the same options, a plan holding every judged triple
    budget = re.search(r"the same command with --sample-budget ([\d,]+) draws", summary).group(1).replace(",", "")
    assert int(budget) == round(6 + more[np.isfinite(more)].max())
    out3 = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", budget, out="eval3")
    bigger = pd.read_csv(out3 / "sampling_plan.csv")
    key = ["head_id", "relation", "tail_id"]
    first = set(map(tuple, side[key].to_numpy()))
    assert first < set(map(tuple, bigger[key].to_numpy()))
    # π only grew, and an item of both plans keeps its sheet triple
    both = side.merge(bigger, on=key, suffixes=("", "_2")).drop_duplicates(key)
    assert len(both) == side.drop_duplicates(key).shape[0] and (both["pi_2"] >= both["pi"] - 1e-12).all()


def _question_of(dump, kg, row, qid):
    side = 0 if row.asks == "head" else 1
    known = kg.entities.index(row.tail_id if side == 0 else row.head_id)
    rel = kg.relations.index(row.relation)
    qs = dump.questions
    return int(np.flatnonzero((qs.side == side) & (qs.entity == known) & (qs.relation == rel))[0])


def test_refusals_name_the_option_or_the_file(workdir, synth_kg, study_with_dumps, tmp_path, capsys):  # noqa: F811
    _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--decide-against", "Gamma", rc=2)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["kgeval: error: --decide-against: 'Gamma': not a study system (Alpha, Beta)"]
    assert not (tmp_path / "eval").exists()  # refused before anything was written
    out = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", "6")
    sheet = pd.read_csv(out / "sampling_plan.tsv", sep="\t", dtype=str)
    labels = tmp_path / "part.labels.txt"
    _oracle(synth_kg, sheet).iloc[1:].to_csv(labels, sep="\t", header=False, index=False)
    capsys.readouterr()
    _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", "6", "--judgments", str(labels),
              out="eval2", rc=2)
    err = [line for line in capsys.readouterr().err.splitlines() if " INFO " not in line]
    assert len(err) == 1 and "sampling_plan.csv" in err[0] and f"has no judgment in {labels}" in err[0], err
    assert not (tmp_path / "eval2").exists()


# ---- the real data -------------------------------------------------------------------------------------------
def _exact_p10(result, lists, kg, tc, qmask_depth=0, k=10):
    """P@10 of the popularity run and of each study list under every published judgment (unjudged: not
    relevant), over the questions with a relevant judgment at depth ≤ ``qmask_depth``: plain numpy."""
    dump = result.dump
    E = kg.num_entities
    j = dump.judged
    rel = np.zeros(len(dump.questions.qid) * E, bool)
    rel[(j.q * E + j.entity)[j.label == 1]] = True
    keep = np.unique(j.q[(j.label == 1) & (j.depth <= qmask_depth)])
    qids = np.asarray(dump.questions.qid).astype(str)

    def p10(top):
        top = np.asarray(top, np.int64)[:, :k]
        hit = (top >= 0) & rel[np.arange(len(top))[:, None] * E + np.maximum(top, 0)]
        return hit[keep].sum(1).mean() / k

    return p10(dump.run_entity), {s: p10(f.loc[qids].to_numpy()) for s, f in lists.items()}


@needs_mirror
@pytest.mark.slow
def test_popularity_against_complex_on_the_real_labels(as_installed):
    """FB-Test-S-C, a popularity run against ComplEx and TransE from the shipped reference pack, every pooled
    label hidden (``pool_depth=0``): the sheet judged by the published labels (never pooled: N) gives, with a
    census, the exact P@10 difference under all the published judgments, and with the plan's own budget an
    interval that holds it."""
    from test_integrations_ir import _popularity_run

    from kgeval import estimate, evaluate, load_testset, plan
    from kgeval.judgments.lists import read_lists

    pack = ROOT / "reference" / "default"
    sc = load_testset("FB-Test-S-C")
    res = evaluate(_popularity_run(sc), sc, measures=["P@10"], name="Popularity", bootstrap=20)
    kg = sc.load_kg()
    _, lists = read_lists(pack, "FB-Test-S-C", ["ComplEx", "TransE"])
    mine, theirs = _exact_p10(res, lists, kg, sc)
    published = {(h, r, t): lab for h, r, t, lab in _published(sc, kg)}

    def oracle(pl):
        t = pl.triples()
        return t.assign(label=["Y" if published.get(x, 0) else "N"
                               for x in zip(t["head_id"], t["relation"], t["tail_id"])])

    census = plan(res, against=["ComplEx", "TransE"], budget=10**9, results=pack, pool_depth=0)
    assert (census.sheet["pi"] == 1).all()
    est = estimate(census, oracle(census)).set_index("B")
    for s in ("ComplEx", "TransE"):
        assert est.loc[s, "delta"] == pytest.approx(mine - theirs[s], abs=1e-12), s
    sampled = plan(res, against=["ComplEx"], results=pack, pool_depth=0)
    # nothing pooled to fit the prior on: p = 0.5, a pessimistic allocation, still a fraction of the unknowns
    assert 0 < sampled.budgets.loc[0, "budget"] < 10_000 and (sampled.sheet["pi"] < 1).any()
    row = estimate(sampled, oracle(sampled)).iloc[0]
    assert row["lo"] <= mine - theirs["ComplEx"] <= row["hi"] and row["decided"]


def _published(sc, kg):
    """(head, relation, tail, label) of every published judgment of FB-Test-S-C."""
    q = sc.questions.set_index("qid")
    j = sc.qrels.join(q, on="qid")
    head = np.where(j["side"] == "head", j["docno"], j["entity"])
    tail = np.where(j["side"] == "head", j["entity"], j["docno"])
    return zip(head, j["relation"], tail, j["relevance"])


def test_api_refuses_what_is_not_a_result_or_a_plan():
    from kgeval import estimate, plan
    from kgeval.errors import BadTypeError

    with pytest.raises(BadTypeError, match="^result: 'FB-Test-S-C' is a str, expected a Result of kgeval.evaluate"):
        plan("FB-Test-S-C")
    with pytest.raises(BadTypeError, match="^sampling_plan: 3 is an int, expected a SamplingPlan of kgeval.plan"):
        estimate(3, "labels.txt")


def test_findings_say_what_a_sample_of_the_plans_budget_decides():
    """Claim 4 undecided by the bounds: the text adds, from sampling_budgets.csv, how many pairs the plan's n
    judgments are expected to decide at 95 % and how many stay undecided at n (a pair beyond max_budget is empty)."""
    from test_bounds import bounds_tau

    from kgeval.analysis import findings as F

    names = {"original": "O", "sample": "S", "complete": "SC", "second": "W"}
    f5 = pd.DataFrame([{"Flavour": "published", "Depth": 4, "Metric": m, "tau": t} for m, t in
                       (("micro_mrr", -0.23), ("macro_mrr", 0.6), ("micro_hits@10", 0.3), ("macro_hits@10", 0.7))])
    budgets = pd.DataFrame({"Metric": "RR", "A": ["a", "a", "b"], "B": ["b", "c", "c"],
                            "budget_needed": [700.0, 1250.0, np.nan], "plan_budget": 1250.0})
    claim = next(c for c in F.CLAIMS if c.claim.startswith("4. "))

    def row(tau, table=budgets):
        return F.findings(F.Outputs(names, figure5=f5, bounds_tau=tau, sampling_budgets=table), [claim]).iloc[0]

    r = row(bounds_tau((0.6, 0.1, 0.9), (0.7, 0.5, 0.8)))
    assert r["holds"] == "undecided"
    assert r["ours"].endswith("; sampled judgments (RR, the plan's expected budget): 2 of 3 pairs decided by a sample "
                              "of 1,250 judgments (95 %), 1 undecided at 1,250")
    none = budgets.assign(budget_needed=np.nan, plan_budget=10000.0)
    assert row(bounds_tau((0.6, 0.1, 0.9), (0.7, 0.5, 0.8)), none)["ours"].endswith(
        "(RR, the plan's expected budget): 3 undecided at 10,000")
    assert "sampled judgments" not in row(bounds_tau((0.6, 0.5, 0.7), (0.7, 0.6, 0.8)))["ours"]  # decided
