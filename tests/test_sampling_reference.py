"""A sampling plan from a reference pack's top-k lists (what a judging campaign starts from without a trained
model): the same three files, byte for byte, as the workflow's plan from the score dumps the lists were cut from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgeval.errors import InputError

TEMPLATES = str(Path(__file__).parents[1] / "annotations/templates.tsv")


def _pack_from_dumps(dumps, kg, k, path):
    """``top10.parquet``'s columns (System, qid, rank, entity) from the dumps' top k."""
    from kgeval.judgments.lists import load_runs

    systems, first, entity = load_runs(dumps, k)
    s, q, r = np.nonzero(entity >= 0)
    pd.DataFrame({"System": np.array(systems)[s], "qid": np.array(first.questions.qid)[q], "rank": r + 1,
                  "entity": entity[s, q, r]}).sample(frac=1, random_state=0).to_parquet(path)
    return systems


@pytest.mark.parametrize("metric", ["P", "RR"])
def test_reference_plan_equals_the_plan_from_the_dumps(pooled, synth_kg, tmp_path, metric):
    from helpers import random_scorer, run_engine

    from kgeval.data.questions import save_questions
    from kgeval.sampling.reference import reference_plan
    from kgeval.sampling.steps import plan_step
    from kgeval.scores.dumps import save_ranking

    sc = pooled[1]
    synth_kg.save(tmp_path / "kg.npz")
    dumps = {}
    for i, name in enumerate(["A", "B", "C"]):
        dumps[name] = str(tmp_path / "scores" / name)
        save_ranking(run_engine(synth_kg, sc, random_scorer(synth_kg, seed=10 + i), k=10), dumps[name], {})
    kw = dict(metric=metric, budget=40, mc_draws=16, seed=4, max_depth=30)
    (tmp_path / "dumps").mkdir()
    want = [str(tmp_path / "dumps" / f) for f in ("sampling_plan.tsv", "sampling_plan.csv", "sampling_budgets.csv")]
    plan_step(dumps, str(tmp_path / "kg.npz"), TEMPLATES, *want, k=5, testset="SC", **kw)
    assert _pack_from_dumps(dumps, synth_kg, 5, tmp_path / "top.parquet") == ["A", "B", "C"]
    sc.save(tmp_path / "sc.tsv", synth_kg)
    save_questions(sc.questions(synth_kg), tmp_path / "sc.questions.tsv", synth_kg)
    got = reference_plan(tmp_path / "kg.npz", tmp_path / "sc.tsv", tmp_path / "sc.questions.tsv",
                         tmp_path / "top.parquet", TEMPLATES, tmp_path / "pack", k=5, testset="SC", **kw)
    assert list(got) == ["sampling_plan.tsv", "sampling_plan.csv", "sampling_budgets.csv"]
    assert len(pd.read_csv(want[1])) > 10
    for path, ref in zip(got.values(), want):
        assert path.read_bytes() == Path(ref).read_bytes(), path.name


def test_reference_lists_of_another_test_set_are_refused(pooled, synth_kg, tmp_path):
    from kgeval.data.questions import save_questions
    from kgeval.sampling.reference import reference_universe

    sc = pooled[1]
    save_questions(sc.questions(synth_kg), tmp_path / "q.tsv", synth_kg)
    pd.DataFrame({"System": ["A"], "qid": ["head99999"], "rank": [1], "entity": [0]}).to_parquet(tmp_path / "t.pq")
    with pytest.raises(InputError, match=r"t\.pq: question head99999 is not a question of .*q\.tsv"):
        reference_universe(synth_kg, sc, tmp_path / "q.tsv", tmp_path / "t.pq")
    pd.DataFrame({"System": ["A"], "qid": ["head1"], "rank": [11], "entity": [0]}).to_parquet(tmp_path / "t.pq")
    with pytest.raises(InputError, match=r"ranks 11–11: expected 1–10"):
        reference_universe(synth_kg, sc, tmp_path / "q.tsv", tmp_path / "t.pq")
