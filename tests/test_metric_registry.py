"""The metric registry: every column the evaluation tables write is declared once, with label and direction."""

from __future__ import annotations

import math

import pytest
import yaml
from helpers import random_scorer, run_engine

from kgeval.analysis.study import tau_between
from kgeval.data.testsets import pooled_test, sample_test
from kgeval.metrics.evaluate import evaluate
from kgeval.metrics.kendall import tau_b
from kgeval.metrics.registry import REGISTRY, higher_is_better, label, metric
from kgeval.pools.qrels import published_judgments, qrels_for_dump
from kgeval.scores.dumps import load_dump, save_ranking


def test_declarations_by_hand():
    mr = REGISTRY["micro_mr"]
    assert (mr.label, mr.higher_is_better, mr.value_range, mr.family, mr.aggregation) == (
        "Micro MR", False, (1.0, math.inf), "rank", "micro")
    assert REGISTRY["macro_hits@7"].label == "Macro Hits@7" and REGISTRY["macro_hits@7"].value_range == (0.0, 1.0)
    assert REGISTRY["micro_amri"].value_range == (-1.0, 1.0) and REGISTRY["micro_amri"].higher_is_better
    assert not REGISTRY["micro_amr"].higher_is_better and REGISTRY["micro_amr"].family == "adjusted"
    assert REGISTRY["micro_zmr"].higher_is_better  # z-scored: (E[MR] − MR) / σ
    assert REGISTRY["micro_imr"].higher_is_better and not REGISTRY["micro_hmr"].higher_is_better
    assert REGISTRY["map_cut_20"].label == "MAP@20" and REGISTRY["map_cut_20"].aggregation is None
    assert REGISTRY["recip_rank"].label == "MRR (trec_eval)"
    assert REGISTRY["condensed_ndcg_cut_20"].label == "nDCG@20 (condensed)"
    assert not REGISTRY["unjudged_10"].higher_is_better and REGISTRY["unjudged_10"].family == "diagnostic"
    # unified metrics: α ≤ 0 and step transforms are rescaled to [0, 1] (higher is better); an unscaled α > 0
    # is a generalised mean rank (lower is better), rescaled when the key says _r
    assert REGISTRY["micro_umf_a-1_p1_uniform"].higher_is_better
    assert REGISTRY["macro_umf_h10_p1_uniform"].value_range == (0.0, 1.0)
    assert not REGISTRY["micro_umf_a1_p1_uniform"].higher_is_better
    assert REGISTRY["micro_umf_a1_p1_uniform"].value_range == (1.0, math.inf)
    assert REGISTRY["micro_umf_a0.5_r_p0_strat0.5"].higher_is_better
    assert REGISTRY["micro_umf_a-1_p1_uniform"].family == "unified"


@pytest.mark.parametrize("column", ["System", "micro_foo", "mrr", "P", "map_cut", "recip_rank_5", "micro_hits",
                                    "tau", "macro_umf_a-1_p1_nonsense"])
def test_unknown_columns(column):
    assert column not in REGISTRY
    with pytest.raises(KeyError, match="not a known metric column"):
        metric(column)
    assert label(column) == column  # figures keep a non-metric column's own name


def test_iteration_is_the_default_table_and_resolves():
    columns = list(REGISTRY)
    assert len(columns) == len(REGISTRY) == len(set(columns)) == 87
    assert all(REGISTRY[c].column == c for c in columns)
    assert columns[:3] == ["micro_hits@1", "micro_hits@2", "micro_hits@3"]


def test_every_column_the_evaluation_writes_is_declared(synth_kg, synth_dir, tmp_path):
    """The evaluation of a real dump with the schema's default trec measures plus the ones the default config
    adds: every column resolves, and nothing is left out of iteration."""
    schema = yaml.safe_load(open("config/schema.yaml"))
    config = yaml.safe_load(open("config/config.yaml"))
    assert set(schema["properties"]["evaluation"]["properties"]["trec_measures"]["default"]) <= set(
        config["evaluation"]["trec_measures"])
    seed = sample_test(synth_kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    sc = pooled_test(synth_kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    save_ranking(run_engine(synth_kg, sc, random_scorer(synth_kg, seed=3), k=30), tmp_path / "d", {"model": "A"})
    dump = load_dump(tmp_path / "d")
    ev = evaluate(dump, qrels_for_dump(dump, published_judgments(sc), 10), synth_kg.relation_category,
                  config["evaluation"]["trec_measures"], families=True)
    written = list(ev.summary)
    assert [c for c in written if c not in REGISTRY] == []
    assert written == list(REGISTRY)  # the default table, in its order


def test_directions_drive_tau():
    """τ between two tables orients each metric by the registry: MR is better when lower."""
    import pandas as pd

    a = pd.DataFrame({"System": ["x", "y", "z"], "micro_mr": [100.0, 200, 300], "micro_mrr": [0.3, 0.2, 0.1]})
    assert tau_between(a, a, "micro_mr", "micro_mrr") == 1.0
    assert tau_b(a["micro_mr"], a["micro_mrr"], higher_is_better("micro_mr"), higher_is_better("micro_mrr")) == 1.0
    assert tau_b(a["micro_mr"], a["micro_mrr"], True, True) == -1.0
