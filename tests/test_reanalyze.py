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


# ---- Figures 6, 7 and 8 from the release's other tables ---------------------------------------------------------
def release_extras(root):
    """lp_per_rel.csv, discriminative_power.csv and stability.csv in the release's layouts (its system names)."""
    for name, shift in (("FB-Test-O", 0.0), ("FB-Test-S", -0.1), ("FB-Test-S-C", 0.05)):
        write(root, name, "lp_per_rel.csv", pd.DataFrame({
            "System": ["fb15k-237-hitter"] * 3 + ["fb15k-237-atte"] * 3,
            "Relation": ["/r/a", "/r/b", "/r/c"] * 2,
            "micro_mrr": [0.2 + shift, 0.5 + shift, 0.9 + shift, 0.1, 0.1, 0.1]}))
    # three systems, every pair in both orders, as the release writes them
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    p = {"micro_mrr": [0.01, 0.2, 0.04], "macro_mrr": [0.5, 0.001, 0.002], "gm_map": [0.3, 0.3, 0.3]}
    rows = [{"SystemA": a, "SystemB": b, **{m: v[i] for m, v in p.items()}} for i, (a, b) in enumerate(pairs)]
    rows += [{**r, "SystemA": r["SystemB"], "SystemB": r["SystemA"]} for r in rows]
    write(root, "FB-Test-S-C", "discriminative_power.csv", pd.DataFrame(rows))
    write(root, "FB-Test-O", "stability.csv", pd.DataFrame({
        "Metric": ["micro_mrr"] * 4, "Size": [0.5, 0.5, 0.8, 0.8], "Repeat": [0, 1, 0, 1],
        "tau": [0.6, 0.8, 0.9, 1.0]}))


def test_figures_6_7_8_from_release_tables(tmp_path):
    hand_tables(tmp_path / "release")
    release_extras(tmp_path / "release")
    out = tmp_path / "out"
    notes = reanalyze(tmp_path / "release", out)
    written = (out / "notes.txt").read_text().splitlines()[0]
    assert "figure6" in written and "figure7" in written and "figure8" in written
    for f in ("figure6.png", "figure6.pdf", "figure7.png", "figure8.png", "figure8.pdf"):
        assert (out / f).stat().st_size > 0

    # Figure 6: HittER found under the release's name; its per-relation values as written, per test set
    f6 = pd.read_csv(out / "figure6.csv")
    assert set(f6["System"]) == {"fb15k-237-hitter"}
    s = f6[f6["TestSet"] == "FB-Test-S"].sort_values("relation")
    assert s["micro_mrr"].tolist() == pytest.approx([0.1, 0.4, 0.8])
    assert any("FB-Test-O 0.5000, FB-Test-S 0.4000, FB-Test-S-C 0.5500" in n for n in notes)

    # Figure 7: mean and sd of tau per subset size
    f7 = pd.read_csv(out / "figure7_summary.csv").set_index("Size")
    assert f7.loc[0.5, "mean"] == pytest.approx(0.7) and f7.loc[0.5, "std"] == pytest.approx(np.std([0.6, 0.8], ddof=1))
    assert f7.loc[0.8, "mean"] == pytest.approx(0.95) and (f7["TestSet"] == "FB-Test-O").all()

    # Figure 8: three unordered pairs (the file lists six rows); share of p < 0.05 and mean p by hand;
    # gm_map is not a metric of the figure
    f8 = pd.read_csv(out / "figure8_summary.csv").set_index("Metric")
    assert list(f8.index) == ["micro_mrr", "macro_mrr"]
    assert (f8["pairs"] == 3).all() and (f8["TestSet"] == "FB-Test-S-C").all() and (f8["Test"] == "t-test").all()
    assert f8.loc["micro_mrr", "significant_share"] == pytest.approx(2 / 3)
    assert f8.loc["micro_mrr", "mean_p"] == pytest.approx((0.01 + 0.2 + 0.04) / 3)
    assert f8.loc["macro_mrr", "significant_share"] == pytest.approx(2 / 3)


def test_figure6_names_a_missing_system(tmp_path):
    hand_tables(tmp_path / "release")
    release_extras(tmp_path / "release")
    notes = reanalyze(tmp_path / "release", tmp_path / "out", figure6_system="TuckER")
    assert any("figure6 skipped" in n for n in notes) and not (tmp_path / "out" / "figure6.png").exists()


def test_discriminative_power_without_pair_columns_is_an_error(tmp_path):
    hand_tables(tmp_path / "release")
    write(tmp_path / "release", "FB-Test-O", "discriminative_power.csv", pd.DataFrame({"x": [1], "micro_mrr": [0.1]}))
    with pytest.raises(InputError, match="discriminative_power.csv.*SystemA"):
        reanalyze(tmp_path / "release", tmp_path / "out")


def test_command_line_hides_fonttools_lines_unless_verbose(tmp_path, capfd):
    hand_tables(tmp_path / "release")
    release_extras(tmp_path / "release")
    assert main(["reanalyze", str(tmp_path / "release"), str(tmp_path / "a")]) == 0
    quiet = capfd.readouterr().err
    assert "figure6: median" in quiet and "fontTools" not in quiet
    assert main(["-v", "reanalyze", str(tmp_path / "release"), str(tmp_path / "b")]) == 0
    assert "fontTools" in capfd.readouterr().err
