"""Re-analysis from metric tables alone: hand-written tables, the pipeline's own tables, malformed input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.analysis.reanalyze import reanalyze
from kgeval.cli import main
from kgeval.errors import InputError


def write(folder, name, file, df):
    (folder / name).mkdir(parents=True, exist_ok=True)
    df.to_csv(folder / name / file, index=False)


def hand_tables(root):
    systems = ["A", "B", "C", "D"]
    base = {"micro_mrr": [0.4, 0.3, 0.2, 0.1], "micro_mr": [10, 20, 30, 40], "micro_hits@10": [0.5, 0.4, 0.3, 0.2],
            "macro_mrr": [0.5, 0.4, 0.3, 0.2]}
    write(root, "FB-Test-O", "evaluation.csv", pd.DataFrame({"System": systems, **base}))
    write(root, "FB-Test-S", "evaluation.csv", pd.DataFrame({"System": systems, **base}))
    rev = {k: v[::-1] for k, v in base.items()}
    write(root, "FB-Test-S-C", "evaluation.csv", pd.DataFrame({"System": systems, **rev}))
    depth = pd.concat([pd.DataFrame({"System": systems, "Depth": 0, **base}),
                       pd.DataFrame({"System": systems, "Depth": 1, **base}),
                       pd.DataFrame({"System": systems, "Depth": 2, **rev})])
    write(root, "FB-Test-S-C", "pooling_depth.csv", depth)
    return systems


def test_hand_written_tables(tmp_path):
    hand_tables(tmp_path / "release")
    notes = reanalyze(tmp_path / "release", tmp_path / "out")
    f4 = pd.read_csv(tmp_path / "out/figure4.csv")
    mrr = f4[f4["Metric"] == "micro_mrr"].set_index("Depth")["tau"]
    assert mrr[1] == 1.0 and mrr[2] == -1.0
    assert set(f4["Metric"]) == {"micro_mr", "micro_mrr", "micro_hits@10"}  # hits@1/3 absent: skipped
    f3 = pd.read_csv(tmp_path / "out/figure3.csv")
    assert f3[f3["TestSet"] == "FB-Test-O"].set_index("System")["Code"].to_dict() == {"A": "A", "B": "B", "C": "C",
                                                                                     "D": "D"}
    taus = pd.read_csv(tmp_path / "out/taus_between_testsets.csv")
    row = taus[(taus["a"] == "FB-Test-O") & (taus["b"] == "FB-Test-S-C") & (taus["Metric"] == "micro_mr")]
    assert row["tau"].iloc[0] == -1.0
    assert any("WN18RR/evaluation.csv" in n for n in notes)  # missing files are noted, not fatal
    assert any("table3 skipped" in n for n in notes)
    assert (tmp_path / "out/figure4.png").stat().st_size > 1000


def test_malformed_table_names_file_and_line(tmp_path):
    hand_tables(tmp_path / "r")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text("System,micro_mrr\nA,0.2\nB,oops\n")
    with pytest.raises(InputError, match=r"FB-Test-S/evaluation.csv:3: column 'micro_mrr' holds a non-number"):
        reanalyze(tmp_path / "r", tmp_path / "o")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text("Name,micro_mrr\nA,0.2\n")
    with pytest.raises(InputError, match=r"evaluation.csv:1: header lacks column\(s\) \['System'\]"):
        reanalyze(tmp_path / "r", tmp_path / "o")


def test_runs_on_the_pipelines_own_tables(pooled, synth_kg, tmp_path):
    from kgeval.metrics.steps import evaluate_testset, pooling_depth_table, reweighted_table
    from kgeval.pools.qrels import published_judgments, qrels_for_dump

    seed, sc, runs, sc_dumps = pooled
    kg_path = tmp_path / "kg.npz"
    synth_kg.save(kg_path)
    seed.save(tmp_path / "seed.tsv", synth_kg)
    root = tmp_path / "metrics"
    dumps_s = {s: str(d.path) for s, d in runs.items()}
    dumps_sc = {s: str(d.path) for s, d in sc_dumps.items()}
    for name, dumps in (("S", dumps_s), ("SC", dumps_sc)):
        (root / name).mkdir(parents=True)
        evaluate_testset(dumps, kg_path, root / name / "evaluation.csv", root / name / "lp_per_rel_type.csv",
                         root / name / "pq.parquet", root / name / "pa.parquet", measures=["recip_rank"])
    pub = published_judgments(sc)
    table = pooling_depth_table(dumps_sc, kg_path, root / "SC/pooling_depth.csv", 10, ["recip_rank"],
                                qrels_by_depth=lambda d, k: qrels_for_dump(d, pub, k))
    reweighted_table(dumps_sc, kg_path, tmp_path / "seed.tsv", root / "SC/lp_sample_rel_dist.csv")
    assert main(["reanalyze", str(root), str(tmp_path / "out"), "--names",
                 "original=S,sample=S,complete=SC,second=SC"]) == 0
    f4 = pd.read_csv(tmp_path / "out/figure4.csv")
    # the re-analysed tau equals the tau computed directly from the depth table
    from kgeval.analysis.study import tau_between

    d3 = f4[(f4["Metric"] == "micro_mrr") & (f4["Depth"] == 3)]["tau"].iloc[0]
    assert d3 == pytest.approx(tau_between(table[table["Depth"] == 0], table[table["Depth"] == 3], "micro_mrr"))
    assert np.isfinite(pd.read_csv(tmp_path / "out/table4.csv")["micro_mrr"]).all()
