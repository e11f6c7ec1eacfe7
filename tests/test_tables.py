"""The summary tables: run times from benchmark files, model quality, the findings predicates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgeval.analysis import findings as F
from kgeval.cli import main as cli_main
from kgeval.errors import InputError
from kgeval.published import PUBLISHED_MRR
from kgeval.tables.steps import (
    findings_step,
    model_quality_table,
    model_table_markdown,
    read_benchmark,
    run_times_table,
)

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def bench(path: Path, seconds: float, end: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:00\t1\t1\t1\t1\t0\t0\t50\t{seconds}\n")
    if end is not None:
        os.utime(path, (end, end))
    return path


# ---- run times ----------------------------------------------------------------------------------------------
def test_run_times_sums_per_rule_and_spans_the_wall_clock(tmp_path, caplog):
    root = tmp_path / "logs/benchmarks"
    bench(root / "train_model/D/M/seed0.tsv", 10.0, end=1000.0)   # 990 .. 1000
    bench(root / "train_model/D/M/seed1.tsv", 20.0, end=1015.0)   # 995 .. 1015 (in parallel)
    bench(root / "train_model/D/N/seed0.tsv", 2.5, end=1020.0)
    bench(root / "analysis_rankings.tsv", 5.0, end=1030.0)        # 1025 .. 1030
    bench(root / "old_rule/D.tsv", 99.0, end=5000.0)              # a renamed rule's leftover: skipped
    stages = {"train_model": "models", "analysis_rankings": "analysis"}
    df = run_times_table(root, stages)
    assert list(df.columns) == ["stage", "rule", "jobs", "seconds", "vs_wall"]
    assert df["vs_wall"].isna().all()  # no job graph: no projection
    rows = {(r.stage, r.rule): (r.jobs, r.seconds) for r in df.itertuples()}
    assert rows[("models", "train_model")] == (3, 32.5)
    assert rows[("analysis", "analysis_rankings")] == (1, 5.0)
    assert rows[("total", "jobs")] == (4, 37.5)
    assert rows[("total", "wall")][1] == pytest.approx(1030.0 - 990.0)
    assert list(df["stage"])[-2:] == ["total", "total"]
    assert "old_rule" in caplog.text


def test_run_times_refuses_a_malformed_benchmark_file(tmp_path):
    root = tmp_path / "b"
    (root / "x").mkdir(parents=True)
    (root / "x" / "a.tsv").write_text("seconds\n3\n")
    with pytest.raises(InputError, match=r"a\.tsv.*column 's'"):
        run_times_table(root, {"x": "data"})
    with pytest.raises(InputError, match="no benchmark file"):
        run_times_table(tmp_path / "empty", {"x": "data"})


def test_read_benchmark_sums_repeats(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text(HEADER + "1.5\t0:00:01\t1\t1\t1\t1\t0\t0\t1\t1\n" + "2.0\t0:00:02\t1\t1\t1\t1\t0\t0\t1\t1\n")
    assert read_benchmark(p) == 3.5


# ---- model quality ------------------------------------------------------------------------------------------
def _quality_inputs(tmp_path):
    def info(d, m, **kw):
        p = tmp_path / f"{d}_{m}.json"
        p.write_text(json.dumps(kw))
        return str(p)

    ev = tmp_path / "ev_fb.csv"
    pd.DataFrame({"System": ["TransE", "DistMult"], "micro_mrr": [0.2504, 0.343]}).to_csv(ev, index=False)
    ev_s = tmp_path / "ev_s.csv"
    pd.DataFrame({"System": ["TransE"], "micro_mrr": [0.5]}).to_csv(ev_s, index=False)
    models = {
        "FB15k-237": {
            "TransE": {"info": info("fb", "TransE", epochs=4, valid_mrr=0.23),
                       "benchmarks": [str(bench(tmp_path / "b/t0.tsv", 100.0)), str(bench(tmp_path / "b/t1.tsv", 50.0))]},
            "DistMult": {"info": info("fb", "DistMult", valid_mrr=0.3), "benchmarks": []},  # downloaded: no training
        },
        "Synth": {"TransE": {"info": info("s", "TransE", epochs=12, valid_mrr=0.4),
                             "benchmarks": [str(bench(tmp_path / "b/s0.tsv", 3.0))]}},
    }
    return models, {"FB15k-237": str(ev), "Synth": str(ev_s)}


def test_model_quality_joins_info_benchmarks_and_evaluation(tmp_path):
    models, evs = _quality_inputs(tmp_path)
    df = model_quality_table(models, evs)
    assert list(df.columns) == ["dataset", "model", "epochs", "train_seconds", "valid_mrr", "test_mrr",
                                "published_mrr", "ratio"]
    t = df.set_index(["dataset", "model"])
    assert t.loc[("FB15k-237", "TransE"), "train_seconds"] == 150.0    # both seeds' jobs
    assert t.loc[("FB15k-237", "TransE"), "epochs"] == 4
    assert t.loc[("FB15k-237", "TransE"), "published_mrr"] == 0.313
    assert t.loc[("FB15k-237", "TransE"), "ratio"] == pytest.approx(0.8)
    assert t.loc[("FB15k-237", "DistMult"), "ratio"] == pytest.approx(1.0)
    assert np.isnan(t.loc[("FB15k-237", "DistMult"), "train_seconds"])
    assert pd.isna(t.loc[("FB15k-237", "DistMult"), "epochs"])
    assert np.isnan(t.loc[("Synth", "TransE"), "published_mrr"]) and np.isnan(t.loc[("Synth", "TransE"), "ratio"])
    assert t.loc[("Synth", "TransE"), "test_mrr"] == 0.5

    md = model_table_markdown(df)
    lines = md.splitlines()
    assert lines[0].startswith("| model | FB15k-237 epochs | valid MRR | FB15k-237 test MRR | published test MRR")
    assert "Synth test MRR" in lines[0]
    assert lines[2] == "| TransE | 4 | 0.230 | 0.250 | 0.313 | 80% | 150 | 12 | 0.500 | – | – | 3 |"
    assert "Published MRRs, FB15k-237:" in md


def test_model_quality_names_a_missing_system(tmp_path):
    models, evs = _quality_inputs(tmp_path)
    models["Synth"]["DistMult"] = models["FB15k-237"]["DistMult"]
    with pytest.raises(InputError, match=r"ev_s\.csv.*'DistMult'"):
        model_quality_table(models, evs)


def test_model_table_command(tmp_path, capsys):
    models, evs = _quality_inputs(tmp_path)
    csv = tmp_path / "mq.csv"
    model_quality_table(models, evs).to_csv(csv, index=False)
    assert cli_main(["model-table", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "| TransE | 4 | 0.230 | 0.250 | 0.313 | 80% | 150 |" in out


def test_published_values_cover_the_13_models_on_both_datasets():
    assert set(PUBLISHED_MRR) == {"FB15k-237", "WN18RR"}
    # the 13 study models and ConvKB (TransH and TransR have no published FB15k-237 or WN18RR value)
    assert all(len(v) == 14 and "TransH" not in v and "TransR" not in v for v in PUBLISHED_MRR.values())
    assert PUBLISHED_MRR["WN18RR"]["TransE"] == 0.228 and PUBLISHED_MRR["FB15k-237"]["HittER"] == 0.373


# ---- findings -----------------------------------------------------------------------------------------------
NAMES = {"original": "O", "sample": "S", "complete": "SC", "second": "W"}
SYSTEMS = ["a", "b", "c", "d", "e"]


def ev(mrr, mr=None):
    return pd.DataFrame({"System": SYSTEMS, "micro_mrr": mrr, "micro_mr": mr if mr is not None else [1.0] * 5})


def claim(prefix: str) -> F.Claim:
    return next(c for c in F.CLAIMS if c.claim.startswith(prefix + ". "))


def row(outputs, prefix):
    return F.findings(outputs, [claim(prefix)]).iloc[0]


def test_claim1_tau_of_original_and_sample():
    same = F.Outputs(NAMES, {"O": ev([.5, .4, .3, .2, .1]), "S": ev([.9, .8, .7, .6, .5])})
    assert row(same, "1")[["ours", "holds"]].tolist() == ["1.0000", "yes"]
    # one swapped pair of ten: τ = 0.8; two adjacent swaps: 0.6 still yes; reversed: no
    swapped = F.Outputs(NAMES, {"O": ev([.5, .4, .3, .2, .1]), "S": ev([.8, .9, .7, .6, .5])})
    assert row(swapped, "1")[["ours", "holds"]].tolist() == ["0.8000", "yes"]
    half = F.Outputs(NAMES, {"O": ev([.5, .4, .3, .2, .1]), "S": ev([.8, .9, .7, .5, .6])})
    assert row(half, "1")["holds"] == "yes"
    mixed = F.Outputs(NAMES, {"O": ev([.5, .4, .3, .2, .1]), "S": ev([.7, .9, .8, .5, .6])})
    assert row(mixed, "1")[["ours", "holds"]].tolist() == ["0.4000", "partly"]
    rev = F.Outputs(NAMES, {"O": ev([.5, .4, .3, .2, .1]), "S": ev([.1, .2, .3, .4, .5])})
    assert row(rev, "1")["holds"] == "no"


def kl_table(s_o, o_full, sc_o):
    # the rows figure2_kl.csv holds: KL(reference ‖ set)
    return pd.DataFrame({"P": ["O", "O", "full"], "Q": ["S", "SC", "O"], "KL": [s_o, sc_o, o_full], "classes": 237})


def test_claim2_klds_within_factor_or_in_order():
    out = F.Outputs(NAMES, figure2_kl=kl_table(0.0890, 0.2790, 0.2386))
    r = row(out, "2")
    assert r["ours"] == "0.0890 / 0.2790 / 0.2386" and r["holds"] == "yes"
    # 10 % off the paper is no match, but in the paper's order
    assert row(F.Outputs(NAMES, figure2_kl=kl_table(0.08, 0.30, 0.20)), "2")["holds"] == "partly"
    # the first definition's values (49 classes + other, no smoothing): off, the order is the paper's
    assert row(F.Outputs(NAMES, figure2_kl=kl_table(0.0233, 0.1457, 0.0912)), "2")["holds"] == "partly"
    assert row(F.Outputs(NAMES, figure2_kl=kl_table(0.3, 0.1, 0.2)), "2")["holds"] == "no"


def depth_table(values: dict[str, list[float]]):
    rows = [{"Flavour": fl, "Depth": d + 1, "Metric": m, "tau": t + (0.5 if fl == "rebuilt" else 0)}
            for fl in ("published", "rebuilt") for m, taus in values.items() for d, t in enumerate(taus)]
    return pd.DataFrame(rows)


def test_claims3_and_4_depth_taus():
    f4 = depth_table({"micro_mrr": [0.6, 0.36, 0.1, -0.23]})
    r = row(F.Outputs(NAMES, figure4=f4), "3")
    assert r["ours"] == "0.3600 → -0.2300 (depth 4)" and r["holds"] == "yes"
    assert row(F.Outputs(NAMES, figure4=depth_table({"micro_mrr": [0.9, 0.8, 0.6, 0.54]})), "3")["holds"] == "partly"
    assert row(F.Outputs(NAMES, figure4=depth_table({"micro_mrr": [0.9, 0.5, 0.6, 0.7]})), "3")["holds"] == "no"
    f5 = depth_table({"micro_mrr": [0.5, -0.23], "macro_mrr": [0.6, 0.18], "micro_hits@10": [0.5, 0.3],
                      "macro_hits@10": [0.5, 0.2]})
    r = row(F.Outputs(NAMES, figure5=f5), "4")
    assert r["holds"] == "partly" and "MRR 0.1800 vs -0.2300; Hits@10 0.2000 vs 0.3000 (depth 2)" == r["ours"]


def test_claim5_table4_limit():
    t4 = pd.DataFrame({"Distribution": ["Complete", "Sparse"], "micro_mr": [0.9, 0.2308],
                       "micro_mrr": [0.9, -0.2051], "micro_hits@1": [0.9, 0.0256], "micro_hits@3": [0.9, -0.2051],
                       "micro_hits@10": [0.9, 0.3377]})
    assert row(F.Outputs(NAMES, table4=t4), "5")["holds"] == "yes"
    t4.loc[1, "micro_mr"] = 0.5
    assert row(F.Outputs(NAMES, table4=t4), "5")["holds"] == "partly"
    t4.loc[1, t4.columns[1:]] = 0.7
    assert row(F.Outputs(NAMES, table4=t4), "5")["holds"] == "no"


def test_claim6_medians():
    f6 = pd.DataFrame({"TestSet": ["O"] * 3 + ["S"] * 3 + ["SC"] * 3, "relation": list("xyz") * 3,
                       "micro_mrr": [.1, .3, .5, .1, .25, .5, .2, .31, .4], "answers": 1})
    r = row(F.Outputs(NAMES, figure6=f6), "6")
    assert r["ours"] == "O 0.3000, S 0.2500, S-C 0.3100" and r["holds"] == "yes"
    f6.loc[f6["TestSet"] == "S", "micro_mrr"] = [.4, .4, .4]
    assert row(F.Outputs(NAMES, figure6=f6), "6")["holds"] == "partly"


def stability_summary(name, means: dict[str, list[float]], sizes=(0.5, 0.8, 0.95)):
    return pd.DataFrame([{"TestSet": name, "Metric": m, "Size": s, "mean": v}
                         for m, vals in means.items() for s, v in zip(sizes, vals)])


def test_claims7_and_8_stability():
    paper_like = stability_summary("O", {"micro_mrr": [.6, .8, .9], "micro_hits@10": [.6, .78, .9],
                                         "macro_mrr": [.9, .97, .99], "macro_hits@10": [.9, .96, .99],
                                         "map_cut_20": [.9, .95, .99], "ndcg_cut_20": [.9, .96, .99]})
    r = row(F.Outputs(NAMES, figure7=paper_like), "7")
    assert r["holds"] == "yes" and r["ours"] == "macro min 0.9500; micro MRR 0.8000, Hits@10 0.7800 (at 80%)"
    ours_like = paper_like.assign(mean=np.where(paper_like["Metric"].str.startswith("micro"), 0.97,
                                                paper_like["mean"]))
    assert row(F.Outputs(NAMES, figure7=ours_like), "7")["holds"] == "partly"

    sc = stability_summary("SC", {"micro_mrr": [.8, .9, .95], "micro_hits@10": [.9, .95, .99],
                                  "macro_mrr": [.85, .92, .96], "macro_hits@10": [.8, .9, .95]})
    r = row(F.Outputs(NAMES, figure7=sc), "8")
    assert r["holds"] == "yes" and "(the highest)" in r["ours"]
    sc2 = sc.assign(mean=np.where(sc["Metric"] == "micro_hits@10", 0.5, sc["mean"]))
    r = row(F.Outputs(NAMES, figure7=sc2), "8")
    assert r["holds"] == "no" and "(highest 0.9100)" in r["ours"]


def test_claim9_discrimination_gap():
    def summ(name, micro, macro):
        return [{"TestSet": name, "Metric": m, "Test": t, "area_under_sorted_p": v + (1 if t == "tukey-hsd" else 0)}
                for t in ("t-test", "tukey-hsd") for m, v in [("micro_mrr", micro), ("micro_hits@10", micro),
                                                              ("macro_mrr", macro), ("map_cut_20", macro)]]
    f8 = pd.DataFrame(summ("O", 0.3, 0.1) + summ("SC", 0.2, 0.15))
    r = row(F.Outputs(NAMES, figure8=f8), "9")
    assert r["ours"] == "gap O 0.2000, S-C 0.0500" and r["holds"] == "yes"
    f8 = pd.DataFrame(summ("O", 0.3, 0.1) + summ("SC", 0.1, 0.4))   # the gap reverses beyond its size
    assert row(F.Outputs(NAMES, figure8=f8), "9")["holds"] == "partly"
    # the tiny run: macro never more discriminative, so no gap shrinks
    f8 = pd.DataFrame(summ("O", 0.1, 0.115) + summ("SC", 0.1, 0.142))
    assert row(F.Outputs(NAMES, figure8=f8), "9")["holds"] == "no"


def test_claim10_mean_rank():
    evs = {"W": ev([.1] * 5, [3000.0, 2000, 4000, 3000, 3000]), "O": ev([.1] * 5, [150.0] * 5),
           "SC": ev([.1] * 5, [900.0] * 5)}
    r = row(F.Outputs(NAMES, evs), "10")
    assert r["ours"] == "3,000 / 150 / 900" and r["holds"] == "partly"


def test_claim11_kp():
    c = pd.DataFrame({"correlation": ["pearson", "pearson", "spearman"], "measure": ["KP(train)", "KP(test)", "KP(test)"],
                      "n_models": [13, 13, 13], "micro_mrr": [0.9, 0.069, 0.9], "micro_hits@10": [0.9, 0.5, 0.9]})
    r = row(F.Outputs(NAMES, kp_correlations=c), "11")
    assert r["ours"] == "0.069 / 0.500 (13 models)" and r["holds"] == "partly"
    t = pd.DataFrame({"model": ["a", "b", "c"], "ranking_seconds": [10.0, 20.0, 30.0], "kp_seconds": [1.0, 1.0, 6.0]})
    r = row(F.Outputs(NAMES, kp_timing=t), "11b")
    assert r["ours"] == "median 10.0% (5.0%–20.0%, 3 models)" and r["holds"] == "yes"
    assert claim("11b").measured_time and not claim("11").measured_time


def test_claim_11c_kp_within_a_model_across_epochs():
    e = pd.DataFrame({"model": ["A", "A", "B", "C", "C"],
                      "kp": ["KP(test)", "KP(valid)", "KP(test)", "KP(test)", "KP(test)"],
                      "metric": ["test_mrr", "test_mrr", "test_mrr", "test_mrr", "valid_mrr"],
                      "checkpoints": [5, 5, 4, 6, 6], "pearson": [0.9, -1.0, 0.5, 0.8, -1.0]})
    r = row(F.Outputs(NAMES, kp_early_stopping=e), "11c")
    # KP(test) against test MRR only: A 0.9, B 0.5, C 0.8 -> median 0.8
    assert r["ours"] == "median 0.800 (0.500 to 0.900; 3 models, ≥ 4 checkpoints each)" and r["holds"] == "yes"
    e["pearson"] = [0.2, 1.0, -0.4, 0.1, 1.0]
    assert row(F.Outputs(NAMES, kp_early_stopping=e), "11c")["holds"] == "no"
    assert row(F.Outputs(NAMES), "11c")["holds"] == "not measured"


def test_claim_11d_kp_on_the_papers_model_set():
    v = pd.DataFrame({"System": ["TransE", "TransH", "ConvKB", "DistMult", "RotatE"],
                      "KP(test)": [1.0, 2.0, 3.0, 100.0, float("nan")],
                      "micro_mrr": [0.1, 0.3, 0.2, 0.0, 0.3], "micro_hits@10": [0.2, 0.4, 0.6, 0.0, 0.5]})
    r = row(F.Outputs(NAMES, kp_values=v), "11d")
    # DistMult is not of the paper's set, RotatE has no KP: Pearson of (1, 2, 3) with (.1, .3, .2) = 0.5, (.2, .4, .6) = 1
    assert r["ours"] == "0.500 / 1.000 (3 of 7 models, MRR 0.100–0.300)" and r["holds"] == "partly"
    assert row(F.Outputs(NAMES, kp_values=v.iloc[[0, 3, 4]]), "11d")["holds"] == "not measured"


def test_claim_11e_kp_over_a_wide_mrr_range():
    rng = pd.DataFrame({"points": ["selected", "all checkpoints", "all checkpoints"],
                        "kp": ["KP(test)", "KP(test)", "KP(valid)"], "metric": ["test_mrr"] * 3,
                        "n": [3, 12, 12], "models": [3, 3, 3], "metric_min": [0.2, 0.01, 0.01],
                        "metric_max": [0.25, 0.25, 0.25], "pearson": [0.1, 0.8, -0.5]})
    r = row(F.Outputs(NAMES, kp_model_range=rng), "11e")
    assert r["ours"] == "pooled 0.800 (12 checkpoints of 3 models, MRR 0.010–0.250); selected 0.100 (MRR 0.200–0.250)"
    assert r["holds"] == "yes"
    rng["pearson"] = [0.1, 0.2, 0.9]
    assert row(F.Outputs(NAMES, kp_model_range=rng), "11e")["holds"] == "no"


def test_claim_11f_kp_robust_to_the_sample_size():
    t = pd.DataFrame({"sample_multiple": [1.0, 0.1, 0.5, 0.5], "correlation": ["pearson", "pearson", "pearson", "kendall"],
                      "metric": ["micro_mrr"] * 4, "mean": [0.9, 0.85, 0.8, -1.0], "sd": [0.01, 0.05, 0.02, 0.0],
                      "seeds": [3, 3, 3, 3]})
    r = row(F.Outputs(NAMES, kp_sample_size=t), "11f")
    assert r["ours"] == "0.850 at c = 0.1 … 0.900 at c = 1 (spread 0.100, sd ≤ 0.050 over 3 seeds)"
    assert r["holds"] == "yes"
    t.loc[1, "mean"] = 0.5  # spread 0.4, smallest mean 0.5
    assert row(F.Outputs(NAMES, kp_sample_size=t), "11f")["holds"] == "partly"
    assert row(F.Outputs(NAMES), "11f")["holds"] == "not measured"


def test_findings_without_inputs_read_na_and_the_step_writes_the_interval_columns(tmp_path):
    out = F.findings(F.Outputs(NAMES))
    assert len(out) == len(F.CLAIMS) >= 12 and set(out["holds"]) == {"not measured"}
    ev_o, ev_s = tmp_path / "o.csv", tmp_path / "s.csv"
    ev([.5, .4, .3, .2, .1]).to_csv(ev_o, index=False)
    ev([.1, .2, .3, .4, .5]).to_csv(ev_s, index=False)
    kl = tmp_path / "kl.csv"
    kl_table(0.0889, 0.2789, 0.2386).to_csv(kl, index=False)
    csv, md = tmp_path / "f.csv", tmp_path / "f.md"
    findings_step(NAMES, {"O": str(ev_o), "S": str(ev_s)}, {"figure2_kl": str(kl)}, str(csv), str(md))
    df = pd.read_csv(csv)
    # claim and holds keep their names and meanings (kgeval reproduce reads them); the intervals come beside
    assert list(df.columns) == ["claim", "paper", "ours", "holds", "point", "interval", "threshold", "undecided",
                                "rule"]
    assert df["holds"].tolist()[:3] == ["no", "yes", "not measured"]
    # no claim_taus.csv: claim 1 is decided on its point value and says so; claim 2 has no interval by nature
    assert df["interval"].tolist()[:2] == ["τ(O, S) -1.0000 (no interval) ≥ 0.6; τ(O, S) -1.0000 (no interval) ≥ 0.3",
                                           "none: the test sets' relation counts, no system or sample to resample"]
    text = md.read_text()
    assert "| claim | paper | ours | holds | point |" in text and "\n- 1. yes: τ ≥ 0.6" in text
    with pytest.raises(ValueError, match="unknown table"):
        findings_step(NAMES, {}, {"figure9": "x"}, str(csv), str(md))
