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


# ---- the second dataset's systems, matched on the model (issue 39, item 1) ------------------------------------
def prefixed(root, first="fb15k-237-", second="wn18rr-", wn_models=("a", "b", "c", "d")):
    """The hand tables with the release's naming: every system under its dataset's prefix."""
    hand_tables(root)
    for name in ("FB-Test-O", "FB-Test-S", "FB-Test-S-C"):
        for file in ("evaluation.csv", "pooling_depth.csv"):
            if (root / name / file).is_file():
                df = pd.read_csv(root / name / file)
                df.assign(System=first + df["System"].str.lower()).to_csv(root / name / file, index=False)
    # WN18RR ranks a, b, c, d as 2nd, 1st, 4th, 3rd by micro MRR
    mrr = {"a": 0.3, "b": 0.4, "c": 0.1, "d": 0.2, "e": 0.9}
    write(root, "WN18RR", "evaluation.csv", pd.DataFrame({"System": [second + m for m in wn_models],
                                                          "micro_mrr": [mrr[m] for m in wn_models]}))


def test_second_dataset_matched_on_the_model_without_its_prefix(tmp_path):
    prefixed(tmp_path / "r")
    notes = reanalyze(tmp_path / "r", tmp_path / "o")
    taus = pd.read_csv(tmp_path / "o/taus_between_testsets.csv")
    row = taus[(taus["a"] == "FB-Test-O") & (taus["b"] == "WN18RR") & (taus["Metric"] == "micro_mrr")]
    # O ranks a > b > c > d, WN18RR b > a > d > c: 4 concordant and 2 discordant pairs of 6, τ = 2/6
    assert row["tau"].iloc[0] == pytest.approx(1 / 3)
    assert any("WN18RR/evaluation.csv: 4 system(s) matched to" in n and "'wn18rr-' here, 'fb15k-237-' there" in n
               for n in notes)


def test_second_dataset_unmatched_models_are_left_out_with_a_note(tmp_path):
    prefixed(tmp_path / "r", wn_models=("a", "b", "e"))
    notes = reanalyze(tmp_path / "r", tmp_path / "o")
    taus = pd.read_csv(tmp_path / "o/taus_between_testsets.csv")
    row = taus[(taus["a"] == "FB-Test-O") & (taus["b"] == "WN18RR") & (taus["Metric"] == "micro_mrr")]
    assert row["tau"].iloc[0] == -1.0  # a, b only: O a > b, WN18RR b > a
    assert any("2 system(s) matched" in n and "without a match: wn18rr-e" in n for n in notes)


def test_second_dataset_with_fewer_than_two_models_in_common_is_refused(tmp_path):
    prefixed(tmp_path / "r", wn_models=("a", "e"))
    with pytest.raises(InputError, match=r"WN18RR/evaluation.csv: shares 1 model\(s\) with .*FB-Test-O/evaluation"
                                         r".csv .*'wn18rr-' here, 'fb15k-237-' there\): τ needs at least two"):
        reanalyze(tmp_path / "r", tmp_path / "o")


def test_dataset_prefix_and_model_matching():
    from kgeval.analysis.reanalyze import dataset_prefix, match_models

    assert dataset_prefix(["fb15k-237-atte", "fb15k-237-tucker"]) == "fb15k-237-"
    assert dataset_prefix(["fb15k-237-rotate", "fb15k-237-rescal"]) == "fb15k-237-"  # cut back to the separator
    assert dataset_prefix(["wn_RotatE", "wn_TuckER"]) == "wn_"
    assert dataset_prefix(["TransE", "TuckER"]) == "" and dataset_prefix(["fb-atte"]) == ""
    assert dataset_prefix(["fb-", "fb-atte"]) == ""  # a name would be left empty
    assert match_models(["fb-AttE", "fb-TuckER"], ["wn18rr-atte", "wn18rr-tucker"]) == {
        "wn18rr-atte": "fb-AttE", "wn18rr-tucker": "fb-TuckER"}
    assert match_models(["AttE", "TuckER"], ["wn-AttE", "wn-TuckER"]) == {"wn-AttE": "AttE", "wn-TuckER": "TuckER"}
    # names that match as they stand are kept: the prefix here is part of the models' names
    assert match_models(["TransE-L1", "TransE-L2"], ["TransE-L1", "TransE-L2", "RotatE"]) == {
        "TransE-L1": "TransE-L1", "TransE-L2": "TransE-L2"}
    # case decides only where ignoring it would merge two systems of one table
    assert match_models(["x-A", "x-a", "x-B"], ["y-a", "y-B"]) == {"y-a": "x-a", "y-B": "x-B"}


# ---- the System column as text, a column named twice, infinite values (issue 39, item 8) ----------------------
@pytest.mark.parametrize("names", [["NA", "None", "null", "B"], ["1", "01", "1.0", "2"], ["", "x", "n/a", "#N/A"]])
def test_system_names_are_text(tmp_path, names):
    if "" in names:  # an empty name is a row without a System, whatever else the column holds
        names = names[1:] + ["y"]
    hand_tables(tmp_path / "r")
    for name in ("FB-Test-O", "FB-Test-S", "FB-Test-S-C"):
        for file in ("evaluation.csv", "pooling_depth.csv"):
            df = pd.read_csv(tmp_path / "r" / name / file) if (tmp_path / "r" / name / file).is_file() else None
            if df is not None:
                df.assign(System=df["System"].map(dict(zip("ABCD", names)))).to_csv(
                    tmp_path / "r" / name / file, index=False)
    reanalyze(tmp_path / "r", tmp_path / "o")
    f3 = pd.read_csv(tmp_path / "o/figure3.csv", dtype=str, keep_default_na=False)
    assert f3[f3["TestSet"] == "FB-Test-O"]["System"].tolist() == names  # in FB-Test-O's micro MRR order
    f4 = pd.read_csv(tmp_path / "o/figure4.csv")
    assert f4[(f4["Metric"] == "micro_mrr")].set_index("Depth")["tau"].to_dict() == {1: 1.0, 2: -1.0}


def test_row_without_a_system_still_refused(tmp_path):
    hand_tables(tmp_path / "r")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text("System,micro_mrr\nA,0.2\n ,0.1\n")
    with pytest.raises(InputError, match=r"FB-Test-S/evaluation.csv:3: row without a System"):
        reanalyze(tmp_path / "r", tmp_path / "o")


def test_column_named_twice_is_refused(tmp_path):
    hand_tables(tmp_path / "r")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text("System,micro_mr,micro_mrr,micro_mr\nA,1,0.5,2\nB,2,0.4,1\n")
    with pytest.raises(InputError, match=r"FB-Test-S/evaluation.csv:1: column 'micro_mr' appears 2 times in the "
                                         r"header$"):
        reanalyze(tmp_path / "r", tmp_path / "o")


@pytest.mark.parametrize("cell", ["inf", "-inf", "Infinity", " inf"])
def test_infinite_metric_value_is_refused(tmp_path, cell):
    hand_tables(tmp_path / "r")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text(f"System,micro_mr\nA,1\nB,2\nC,{cell}\nD,4\n")
    with pytest.raises(InputError, match=rf"FB-Test-S/evaluation.csv:4: column 'micro_mr' holds '{cell.strip()}': "
                                         "a metric value is a finite number"):
        reanalyze(tmp_path / "r", tmp_path / "o")


@pytest.mark.parametrize("cell", ["", "NA", "NaN", "null"])
def test_missing_metric_cells_stay_empty_values(tmp_path, cell):
    hand_tables(tmp_path / "r")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text(f"System,micro_mrr\nA,0.4\nB,{cell}\nC,0.2\nD,0.1\n")
    notes = reanalyze(tmp_path / "r", tmp_path / "o")
    assert "τ of micro_mrr between FB-Test-O and FB-Test-S is empty: no value for FB-Test-S/B" in notes


# ---- kgeval reanalyze --release (issue 39, item 1) -----------------------------------------------------------
def release_mirror(root):
    """A mirror holding hand tables at the release's manifest paths, and a manifest pinning them."""
    import hashlib

    from kgeval.analysis.reanalyze import RELEASE

    tables = root / "mirror" / RELEASE
    prefixed(tables)
    rows = ["mirror_path\turl\tsha256\tbytes"]
    for path in sorted(p for p in tables.rglob("*.csv")):
        rel = RELEASE + path.relative_to(tables).as_posix()
        data = path.read_bytes()
        rows.append(f"{rel}\thttps://example.invalid/{'0' * 40}/{rel}\t{hashlib.sha256(data).hexdigest()}\t{len(data)}")
    (root / "resources.tsv").write_text("\n".join(rows) + "\n")
    return root / "mirror", root / "resources.tsv", tables


def test_release_fetched_verified_and_reanalysed(tmp_path, capsys):
    mirror, manifest, tables = release_mirror(tmp_path)
    out = tmp_path / "out"
    assert main(["reanalyze", "--release", "--manifest", str(manifest), "--mirror", str(mirror),
                 "--out", str(out)]) == 0
    for path in tables.rglob("*.csv"):  # the verified tables kept beside the analysis
        assert (out / "release" / path.relative_to(tables)).read_bytes() == path.read_bytes()
    assert (out / "figure4.csv").is_file()
    notes = (out / "notes.txt").read_text()
    # notes name where the tables end up, not the staging folder they were fetched into
    assert f"{out / 'release' / 'WN18RR/evaluation.csv'}: 4 system(s) matched" in notes
    assert ".kgeval" not in notes and "staging" not in notes


def test_release_with_a_damaged_mirror_file_writes_nothing(tmp_path, capsys):
    mirror, manifest, tables = release_mirror(tmp_path)
    (tables / "FB-Test-S/evaluation.csv").write_text("System,micro_mrr\nfb15k-237-a,0.9\n")
    out = tmp_path / "out"
    rc = main(["reanalyze", "--release", "--manifest", str(manifest), "--mirror", str(mirror), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err[-1].startswith("kgeval: error: zhouying20/kgc-sparsity/result/FB-Test-S/evaluation.csv "
                                          f"(from {mirror}") and ": SHA-256 mismatch: expected " in err[-1]
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("args, problem", [
    (["--release", "somewhere"], "--release fetches the tables it reads: give no FOLDER ('somewhere')"),
    ([], "give the FOLDER of tables to re-analyse, or --release"),
    (["folder", "--mirror", "m"], "--manifest and --mirror go with --release"),
])
def test_release_arguments(tmp_path, capsys, args, problem):
    assert main(["reanalyze", *args, "--out", str(tmp_path / "o")]) == 2
    assert problem in capsys.readouterr().err


def test_manifest_without_the_release_is_named(tmp_path, capsys):
    (tmp_path / "m.tsv").write_text("mirror_path\turl\tsha256\tbytes\n")
    assert main(["reanalyze", "--release", "--manifest", str(tmp_path / "m.tsv"), "--out", str(tmp_path / "o")]) == 2
    assert (f"kgeval: error: {tmp_path / 'm.tsv'}: no entry under zhouying20/kgc-sparsity/result/"
            in capsys.readouterr().err)


@pytest.mark.parametrize("edit, says", [
    (lambda rows: rows[0].update(micro_mrr=1.5), r"discriminative_power.csv:2: column 'micro_mrr' holds 1.5: a p-value"),
    (lambda rows: rows[1].update(macro_mrr=-0.5), r"discriminative_power.csv:3: column 'macro_mrr' holds -0.5"),
    (lambda rows: rows[2].update(SystemA="C"), r"discriminative_power.csv:4: SystemA and SystemB are both 'C'")])
def test_pvalues_out_of_range_and_a_system_paired_with_itself_are_refused(tmp_path, edit, says):
    hand_tables(tmp_path / "release")
    release_extras(tmp_path / "release")
    path = tmp_path / "release/FB-Test-S-C/discriminative_power.csv"
    rows = pd.read_csv(path).to_dict("records")
    edit(rows)
    pd.DataFrame(rows).to_csv(path, index=False)
    with pytest.raises(InputError, match=says):
        reanalyze(tmp_path / "release", tmp_path / "out")
    # the long layout (the pipeline's figure8_pvalues.csv) is held to the same
    long = pd.DataFrame({"Metric": ["micro_mrr"] * 2, "SystemA": ["A", "B"], "SystemB": ["B", "C"], "p": [0.2, 2.0]})
    long.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"discriminative_power.csv:3: column 'p' holds 2"):
        reanalyze(tmp_path / "release", tmp_path / "out")


@pytest.mark.parametrize("depth", [-1, 1.5])
def test_a_pooling_depth_that_is_not_a_whole_number_from_0_is_refused(tmp_path, capsys, depth):
    hand_tables(tmp_path / "release")
    path = tmp_path / "release/FB-Test-S-C/pooling_depth.csv"
    table = pd.read_csv(path)
    table["Depth"] = table["Depth"].astype(object)
    table.loc[5, "Depth"] = depth  # line 7
    table.to_csv(path, index=False)
    assert main(["reanalyze", str(tmp_path / "release"), "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pooling_depth.csv:7: Depth" in err[0] and "whole number" in err[0], err
