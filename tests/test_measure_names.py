"""Measure names: the registry is built from the metrics' own declarations, and one resolver reads every name
the API, the config and the bounds stage take (issue 40 item 1; issue 39 item 3's measure names)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import ROOT
from helpers import random_scorer, write_run

from kgeval.api import compare, evaluate, load_testset, place, resolve_measures
from kgeval.config import load_config_file, validate_config
from kgeval.data.kg import KnowledgeGraph
from kgeval.data.questions import load_questions
from kgeval.errors import ConfigError, KgevalError, MeasureError
from kgeval.judgments.metrics import METRICS, BoundedMetric, bounded_metric
from kgeval.metrics import adjusted, rank_based, trec
from kgeval.metrics.names import split
from kgeval.metrics.registry import REGISTRY, resolve

SC = "Synth-Test-S-C"


# ---- issue 39 item 3: every bad name or cutoff is one line naming the measure and what is allowed ------------
@pytest.mark.parametrize(("name", "allowed"), [
    ("RR@0", "positive integer"), ("Hits@0", "1–10"), ("Hits@1000000", "1–10"), ("Hits@-1", "1–10"),
    ("nDCG@0", "positive integer"), ("AH@2", "1, 3, 10"), ("P_0", "positive integer"), ("Hits@x", "1–10"),
    ("MRR@3", "takes no cutoff"), ("Hits", "1–10"), ("Foo@3", "KGC metrics: MR, MRR, Hits@k")])
def test_bad_names_are_refused_in_one_line(name, allowed):
    with pytest.raises(MeasureError) as exc:
        resolve_measures(["MRR", name])
    assert isinstance(exc.value, KgevalError) and isinstance(exc.value, ValueError)
    message = str(exc.value)
    assert f"'{name}'" in message and allowed in message and "\n" not in message


def test_evaluate_refuses_a_bad_cutoff_before_touching_the_data(tmp_path):
    """The names are checked first: no test set is loaded or built for a call that cannot succeed (on d99e1f8
    RR@0 divided by zero and Hits@-1 silently gave Hits@1)."""
    for name in ("RR@0", "Hits@-1", "nDCG@0", "Hits@1000000"):
        with pytest.raises(MeasureError, match=f"'{name}'"):
            evaluate({"q": {"d": 1.0}}, "No-Such-Test-Set", measures=[name], workdir=tmp_path)


def test_place_and_compare_read_names_with_the_same_resolver():
    """Before any reference is read: a bad cutoff, and RR@k, which the study's tables do not hold (on d99e1f8
    compare silently showed uncut recip_rank for RR@10)."""
    with pytest.raises(MeasureError, match="'Hits@0'.*1–10"):
        place([], metrics=["MRR", "Hits@0"])
    with pytest.raises(MeasureError, match="'RR@10'.*use RR"):
        compare([], measures=["MRR", "RR@10"])


def test_cutoffs_split_in_both_spellings():
    assert split("Hits@10") == ("Hits", 10) and split("ndcg_cut_20") == ("ndcg_cut", 20)
    assert split("MRR") == ("MRR", None) and split("num_rel_ret") == ("num_rel_ret", None)
    for bad in ("Hits@", "Hits@-1", "Hits@0", "Hits@1.5", "Hits@ 3", "P_0"):
        with pytest.raises(MeasureError):
            split(bad)


# ---- one resolver: synonyms, case, the four spellings of RR --------------------------------------------------
def test_synonyms_and_case_resolve_to_one_column():
    same = ["z-MRR", "zmrr", "ZMRR", "z_inverse_harmonic_mean_rank", "zihmr"]
    assert {(resolve(n).micro, resolve(n).macro) for n in same} == {("micro_zmrr", "macro_zmrr")}
    assert resolve("hits_at_10").macro == resolve("Hits@10").macro == resolve("h@10").macro == "macro_hits@10"
    assert resolve("mean_reciprocal_rank").micro == "micro_mrr"
    assert resolve("NDCG@20").macro == resolve("nDCG@20").macro == "ndcg_cut_20"
    assert (resolve("macro_hits@3").micro, resolve("macro_hits@3").macro) == (None, "macro_hits@3")
    assert not resolve("macro_hits@3").trec and resolve("P@10").trec


def test_kgc_and_trec_names_are_disjoint():
    """The resolver tries the KGC metrics first: no trec measure may answer to a KGC metric's name."""
    from kgeval.metrics.registry import KGC

    for decl in trec.DECLARED.values():
        assert not any(n in KGC for n in (decl.name, *decl.synonyms)), decl.name


def test_rr_has_one_declaration():
    """RR, recip_rank and RR@k are one measure: trec_eval's recip_rank, RR@k the same values cut at k."""
    plain = {resolve(n).macro for n in ("RR", "recip_rank", "rr", "Recip_Rank")}
    assert plain == {"recip_rank"} and resolve("RR").cut is None
    cut = resolve("RR@10")
    assert (cut.macro, cut.cut, cut.trec) == ("recip_rank", 10, True)
    # hand-computed: first relevant at ranks 1, 2, 10, 11, none
    rr = np.array([1.0, 0.5, 0.1, 1 / 11, 0.0])
    assert trec.reciprocal_rank_at(rr, 10).tolist() == [1.0, 0.5, 0.1, 0.0, 0.0]
    assert trec.reciprocal_rank_at(rr, 1).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    with pytest.raises(MeasureError, match="takes no cutoff"):
        trec.parse_measure("RR@10")  # not a trec_eval column: only the API's RR@k cuts recip_rank


# ---- the registry is the classes' declarations ---------------------------------------------------------------
def _declared():
    return {type(m) for m in rank_based.study_metrics() + adjusted.family_metrics()}


def test_every_metric_class_declares_itself_once():
    for cls in _declared():
        m = cls() if "{k}" not in cls.key else cls(7)
        assert m.key == cls.key.format(k=7)
        for agg, word in (("micro", "Micro"), ("macro", "Macro")):
            decl = REGISTRY[f"{agg}_{m.key}"]
            assert decl.label == f"{word} {cls.label.format(k=7)}"
            assert (decl.higher_is_better, decl.value_range, decl.family) == (
                cls.increasing, cls.value_range, cls.family)
        assert cls.citation, cls
        for n in (cls.label.split("@")[0], *cls.synonyms):
            assert resolve(n + ("@10" if "{k}" in cls.key else "")).micro == f"micro_{cls.key.format(k=10)}", n


def test_trec_declarations_are_the_registry():
    for name, decl in trec.DECLARED.items():
        column = name + ("_7" if decl.cutoff else "")
        assert decl.function.__name__ == name and column in REGISTRY
        assert REGISTRY[column].label == decl.label.format(k=7)
        assert REGISTRY[column].higher_is_better == decl.higher_is_better
        assert trec.parse_measure(column) == (decl.function, 7 if decl.cutoff else None, False)


def test_the_default_table_is_the_default_configuration():
    config = yaml.safe_load(open(ROOT / "config/config.yaml"))
    trec_columns = [c for c in REGISTRY if REGISTRY[c].aggregation is None]
    assert trec_columns == config["evaluation"]["trec_measures"]


def test_synonyms_agree_with_pykeen():
    """Where PyKEEN knows a synonym, it names the same metric (the same key in PyKEEN's resolver)."""
    from pykeen.metrics.ranking import rank_based_metric_resolver as theirs

    pairs = {"MR": "mr", "MRR": "mrr", "AMR": "amr", "AMRI": "amri", "z-MR": "zmr", "AMRR": "amrr",
             "z-MRR": "zmrr", "IGMR": "igmr", "GMR": "gmr", "HMR": "hmr"}
    for label, key in pairs.items():
        ours = next(c for c in _declared() if c.key == key)
        assert ours.label == label
        pykeen_classes = {theirs.lookup(s) for s in ours.synonyms if theirs.normalize(s) in theirs.synonyms
                          or theirs.normalize(s) in theirs.lookup_dict}
        assert len(pykeen_classes) == 1, (label, pykeen_classes)


# ---- the bounded metrics and the config -----------------------------------------------------------------------
def test_bounded_metrics_resolve_through_the_shared_names():
    schema = yaml.safe_load(open(ROOT / "config/schema.yaml"))["properties"]["bounds"]["properties"]
    assert schema["metrics"]["items"]["enum"] == list(METRICS)
    for key in ("milp_metrics", "decide_metrics", "simulation_metrics"):
        assert set(schema[key]["items"]["enum"]) <= set(METRICS)
    assert isinstance(bounded_metric("rr", 10), BoundedMetric)
    assert bounded_metric("recip_rank", 10).name == bounded_metric("RR", 10).name == "RR@10"
    assert bounded_metric("precision", 5).weights.tolist() == [0.2] * 5
    with pytest.raises(MeasureError, match="unknown bounded metric 'AP'"):
        bounded_metric("AP", 10)
    with pytest.raises(MeasureError, match="positive integer"):
        bounded_metric("P", 0)


def test_config_trec_measures_go_through_the_resolver(tmp_path):
    config = load_config_file(ROOT / "config/tiny.yaml")
    config.setdefault("evaluation", {})["trec_measures"] = ["map", "P_0"]
    with pytest.raises(ConfigError, match="evaluation/trec_measures: measure 'P_0': the cutoff '0'"):
        validate_config(config, ROOT / "config/schema.yaml", models=False)


# ---- through evaluate: every accepted name gives the evaluation's own value ----------------------------------
def test_evaluate_takes_macro_columns_and_metric_families(workdir, tmp_path):
    """On d99e1f8 ``macro_hits@3`` was sent to trec_eval (ValueError) and ``zmrr`` looked for per-answer values
    that the families do not have (KeyError); both are the evaluation's summary values now."""
    kg = KnowledgeGraph.load(workdir / "resources/datasets/Synth/kg.npz")
    qs = load_questions(workdir / f"resources/testsets/{SC}.questions.tsv", kg)
    write_run(tmp_path / "r.run", kg, qs, random_scorer(kg, seed=7), depth=60)
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    res = evaluate(tmp_path / "r.run", sc, measures=["macro_hits@3", "zmrr", "RR@10", "Hits@3"], bootstrap=20)
    summary = res.evaluation.summary
    assert res.value("macro_hits@3") == summary["macro_hits@3"] == res.value("Hits@3")
    assert res.value("zmrr", "micro") == summary["micro_zmrr"] and res.value("zmrr") == summary["macro_zmrr"]
    rr = res.evaluation.per_question["recip_rank"].to_numpy()
    assert res.value("RR@10") == pytest.approx(float(np.where(rr >= 0.1, rr, 0.0).mean()))
