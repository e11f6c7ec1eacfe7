"""Steps of the analysis stage: the study's τ analyses, stability and discriminative power, with figures."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ..data.kg import KnowledgeGraph
from ..data.questions import load_questions
from ..data.testsets import TestSet
from ..io import write_csv, write_table
from ..metrics.registry import REGISTRY
from . import figures, study
from .items import ItemTable, macro_items, micro_items
from .metric_steps import case_study_step, umf_properties_step  # noqa: F401  (the scripts import steps from here)
from .resampling import DEFAULT_SIZES
from .selections import (
    FAMILIES_DEPTH,
    FIG3,
    FIG4,
    FIG5,
    FIG6,
    MACRO_STUDY,
    MICRO_STUDY,
    MRR_PAIR,
    TABLE3,
    TABLE4,
    UMF_STUDY_MACRO,
    UMF_STUDY_MICRO,
)

log = logging.getLogger(__name__)



class TestSetFiles:
    """The files of one test set that the analyses read."""

    __test__ = False

    def __init__(self, name: str, files: dict[str, str]):
        self.name = name
        self.files = files
        self._kg: KnowledgeGraph | None = None

    @property
    def kg(self) -> KnowledgeGraph:
        if self._kg is None:
            self._kg = KnowledgeGraph.load(self.files["kg"])
        return self._kg

    def evaluation(self) -> pd.DataFrame:
        return pd.read_csv(self.files["evaluation"])

    def testset(self) -> TestSet:
        return TestSet.load(self.files["testset"], self.kg, self.name)

    def items(self, micro: list[str], macro: list[str], systems: list[str],
              depth: int | None = None) -> tuple[ItemTable, ItemTable]:
        qs = load_questions(self.files["questions"], self.kg)
        ts = self.testset()
        if depth is None:
            pa = pd.read_parquet(self.files["per_answer"])
            pq = pd.read_parquet(self.files["per_question"])
        else:
            ts = ts.at_depth(depth)
            pa = pd.read_parquet(self.files["depth_answers"]).query("Depth == @depth")
            pq = pd.read_parquet(self.files["depth_questions"]).query("Depth == @depth")
        return (micro_items(pa, qs, ts, self.kg, micro, systems),
                macro_items(pq, qs, ts, self.kg, [m for m in macro if m in pq.columns], systems))


def _out(folder: str | Path, name: str) -> dict[str, Path]:
    folder = Path(folder)
    return {ext: folder / f"{name}.{ext}" for ext in ("csv", "png", "pdf", "md", "tex")}


def rankings_step(original: dict, sample: dict, complete: dict, out_dir: str, tables_dir: str,
                  per_relation_system: str, bootstrap: int = 1000, relation_classes: int = 50,
                  seed: int = 0, bounds_tau: str | None = None, bounds_prior: str | None = None) -> None:
    """Figures 2–6 and Tables 2–4 (τ analyses of the label-sparsity study), with bootstrap intervals. With the
    bounds stage's ``tau.csv`` (and ``tau_prior.csv``) of the completed test set, Figure 5 also draws the τ
    interval every labelling of the unjudged triples allows and the expected τ under the relevance prior."""
    orig, samp, comp = (TestSetFiles(d["name"], d) for d in (original, sample, complete))
    ev_o, ev_s, ev_sc = orig.evaluation(), samp.evaluation(), comp.evaluation()
    systems = list(ev_o["System"])
    out = Path(out_dir)

    f3 = study.figure3({orig.name: ev_o, samp.name: ev_s, comp.name: ev_sc}, orig.name, FIG3)
    write_csv(f3, out / "figure3.csv")
    figures.figure3(f3, FIG3, [orig.name, samp.name, comp.name], out / "figure3.png", out / "figure3.pdf")
    write_csv(f3[["Code", "System"]].drop_duplicates().sort_values("Code"), out / "system_codes.csv")

    depth_pub = pd.read_csv(complete["pooling_depth"])
    depth_reb = pd.read_csv(complete["pooling_depth_rebuilt"])
    max_depth = int(depth_pub["Depth"].max())
    items = {d: comp.items(FIG4 + ["micro_hits@10"], FIG5, systems, depth=d) for d in range(max_depth + 1)}
    micro_by_depth = {d: it[0] for d, it in items.items()}
    macro_by_depth = {d: it[1] for d, it in items.items()}
    both = {d: _merge(micro_by_depth[d], macro_by_depth[d]) for d in items}
    f4 = pd.concat([study.depth_taus(depth_pub, FIG4, "published", micro_by_depth, repeats=bootstrap, seed=seed),
                    study.depth_taus(depth_reb, FIG4, "rebuilt")], ignore_index=True)
    write_csv(f4, out / "figure4.csv")
    figures.depth_taus(f4, FIG4, out / "figure4.png", out / "figure4.pdf",
                       f"τ between {samp.name} (depth 0) and {comp.name}(d): micro metrics")
    f5 = pd.concat([study.depth_taus(depth_pub, FIG5, "published", both, repeats=bootstrap, seed=seed),
                    study.depth_taus(depth_reb, FIG5, "rebuilt")], ignore_index=True).assign(Kind=study.MEASURED)
    if bounds_tau:
        prior = pd.read_csv(bounds_prior) if bounds_prior else None
        f5 = pd.concat([f5, study.bounds_overlay(pd.read_csv(bounds_tau), prior)], ignore_index=True)
    write_csv(f5, out / "figure5.csv")
    figures.depth_taus(f5, FIG5, out / "figure5.png", out / "figure5.pdf",
                       f"τ between {samp.name} (depth 0) and {comp.name}(d): micro vs macro")

    ia, _ = samp.items(TABLE3, [], systems)
    ib, _ = comp.items(TABLE3, [], systems)
    t3 = study.category_taus(pd.read_csv(sample["per_category"]), pd.read_csv(complete["per_category"]), TABLE3,
                             ia, ib, bootstrap, seed)
    write_csv(t3, out / "table3_long.csv")
    wide = t3.pivot_table(index=["QuestionType", "RelationType"], columns="Metric", values="tau").reset_index()
    wide = wide[["QuestionType", "RelationType"] + [m for m in TABLE3 if m in wide]]
    t = _out(tables_dir, "table3")
    write_table(wide, t["csv"], t["md"], t["tex"], caption=f"Table 3: Kendall's τ between {samp.name} and {comp.name} "
                "system rankings per question side and relation category (micro metrics).", label="tab:categories")

    t4 = study.reweighting_taus(ev_s, ev_sc, pd.read_csv(complete["reweighted"]), TABLE4)
    write_csv(_claim_taus(orig, samp, comp, systems, both, max_depth), out / "claim_taus.csv")
    t = _out(tables_dir, "table4")
    write_table(t4, t["csv"], t["md"], t["tex"], caption=f"Table 4: Kendall's τ with {samp.name} of {comp.name}'s micro "
                f"metrics, as they are (Complete) and re-weighted to {samp.name}'s relation distribution (Sparse).",
                label="tab:reweighting")

    kg = orig.kg
    dist, kl = study.relation_distributions({orig.name: orig.testset().positives, samp.name: samp.testset().positives,
                                             comp.name: comp.testset().positives}, kg.known(), kg, relation_classes,
                                            reference=orig.name)
    write_csv(dist, out / "figure2_distribution.csv")
    write_csv(kl, out / "figure2_kl.csv")
    figures.figure2(dist, kl, out / "figure2.png", out / "figure2.pdf")

    per_answer = {ts.name: pd.read_parquet(ts.files["per_answer"]) for ts in (orig, samp, comp)}
    system = per_relation_system if per_relation_system in systems else systems[0]
    f6 = study.per_relation(per_answer, system, kg)
    write_csv(f6, out / "figure6.csv")
    figures.figure6(f6, FIG6, system, out / "figure6.png", out / "figure6.pdf")

    t2 = study.examples(samp.testset().positives, comp.testset(), kg)
    t = _out(tables_dir, "table2")
    write_table(t2, t["csv"], t["md"], t["tex"], caption=f"Table 2: questions of {samp.name} with their original "
                f"answers and the answers the {comp.name} annotations added.", label="tab:examples")

    depth_items = pd.read_csv(complete["pooling_depth"])
    reb = pd.read_csv(complete["pooling_depth_rebuilt"])
    per_sys, taus = study.incomplete_judgments({
        "published": depth_items[depth_items["Depth"] == max_depth],
        "rebuilt": reb[reb["Depth"] == max_depth]})
    write_csv(per_sys, out / "incomplete_judgments.csv")
    write_csv(taus, out / "incomplete_judgments_tau.csv")
    log.info("figure 4 (published, micro MRR): %s",
             f4[(f4["Flavour"] == "published") & (f4["Metric"] == FIG3)][["Depth", "tau"]].to_dict("records"))


def _claim_taus(orig: TestSetFiles, samp: TestSetFiles, comp: TestSetFiles, systems: list[str],
                both: dict[int, ItemTable], max_depth: int) -> pd.DataFrame:
    """The findings' τ with their intervals (``study.claim_taus``): claim 1's τ(O, S), claim 3's and 4's
    τ(S, S-C(d)) at depth 2 and the deepest, and Table 4's; the Sparse weights come from each completed-set
    answer's relation and the sampled set's relation shares, as ``metrics.reweighted_table``."""
    io, _ = orig.items(["micro_mrr"], [], systems)
    is_, _ = samp.items(TABLE4, [], systems)
    ic, _ = comp.items(TABLE4, [], systems)
    qs = load_questions(comp.files["questions"], comp.kg)
    relation = pd.Series(qs.relation, index=qs.qid).loc[ic.info["qid"]].to_numpy()
    weights = study.reweighted_weights(relation, samp.testset().positives[:, 1])
    pairs = {("original-sample", "micro_mrr"): (io.matrices["micro_mrr"], is_.matrices["micro_mrr"], None)}
    for d in sorted({min(2, max_depth), max_depth}):
        for m in FIG5:
            if m in both[0].matrices and m in both[d].matrices:
                pairs[f"depth {d}", m] = (both[0].matrices[m], both[d].matrices[m], None)
    for label, w in (("Complete", None), ("Sparse", weights)):
        for m in TABLE4:
            pairs[f"table4 {label}", m] = (is_.matrices[m], ic.matrices[m], w)
    return study.claim_taus(pairs)


def _is_unified(metrics: pd.Series) -> pd.Series:
    """Which rows hold a unified-framework metric (the families companions draw them apart)."""
    return metrics.map(lambda m: m in REGISTRY and REGISTRY[m].family == "unified").astype(bool)


def _merge(a: ItemTable, b: ItemTable) -> ItemTable:
    """One table holding both micro and macro matrices (the bootstrap only needs the matrices)."""
    return ItemTable(a.systems, {**a.matrices, **b.matrices}, a.units, a.info, a.n_units, {**a.keys, **b.keys})


def _item_tables(test_sets: list[dict], micro: list[str] | None, macro: list[str] | None):
    """Per test set: its [micro, macro] per-item score tables (systems in evaluation.csv order) and the metric
    names (default: the study's metrics and the unified-framework settings)."""
    micro = micro or MICRO_STUDY + UMF_STUDY_MICRO
    macro = macro or MACRO_STUDY + UMF_STUDY_MACRO
    tables, metrics = {}, {}
    for d in test_sets:
        ts = TestSetFiles(d["name"], d)
        tables[ts.name] = list(ts.items(micro, macro, list(ts.evaluation()["System"])))
        metrics[ts.name] = micro + macro
    return tables, metrics


def stability_step(test_sets: list[dict], out_csv: str, out_summary: str, png: str, pdf: str,
                   sizes: list[float] | None = None, repeats: int = 50, seed: int = 0,
                   micro: list[str] | None = None, macro: list[str] | None = None,
                   families_png: str | None = None, families_pdf: str | None = None) -> None:
    """Figure 7: stability of the system ranking under subsampling of each test set (and a companion figure
    for the unified metrics; adjusted metrics rank exactly like their base metrics)."""
    tables, metrics = _item_tables(test_sets, micro, macro)
    stab = study.stability(tables, metrics, tuple(sizes or DEFAULT_SIZES), repeats, seed)
    summary = study.stability_summary(stab)
    write_csv(stab, out_csv)
    write_csv(summary, out_summary)
    unified = _is_unified(summary["Metric"])
    figures.figure7(summary[~unified], png, pdf)
    if families_png:
        figures.figure7(summary[summary["Metric"].isin(MRR_PAIR) | unified], families_png, families_pdf)


def discrimination_step(test_sets: list[dict], out_pvalues: str, out_summary: str, png: str, pdf: str,
                        trials: int = 1000, seed: int = 0, alpha: float = 0.05, micro: list[str] | None = None,
                        macro: list[str] | None = None, families_png: str | None = None,
                        families_pdf: str | None = None) -> None:
    """Figure 8: discriminative power (paired t-test and randomised Tukey HSD over every system pair), and a
    companion figure for the unified metrics."""
    tables, metrics = _item_tables(test_sets, micro, macro)
    pvalues, summary = study.discrimination(tables, metrics, trials, seed, alpha)
    write_csv(pvalues, out_pvalues)
    write_csv(summary, out_summary)
    unified = _is_unified(pvalues["Metric"])
    figures.figure8(pvalues[~unified], png, pdf, alpha)
    if families_png:
        figures.figure8(pvalues[pvalues["Metric"].isin(MRR_PAIR) | unified], families_png, families_pdf, alpha)


def families_step(original: dict, complete: dict, second: dict | None, out_dir: str, tables_dir: str) -> None:
    """The metric-family analysis: identity of adjusted rankings within a test set, cross-dataset flips,
    family companions of Figures 4/5, and the unified-metric grid with its sensitivity heat maps."""
    from . import families

    out = Path(out_dir)
    orig = TestSetFiles(original["name"], original)
    ev_o = orig.evaluation()
    write_csv(families.identical_within_testset(ev_o), out / "families_within_testset.csv")
    if second:
        sec = TestSetFiles(second["name"], second)
        cross = families.cross_dataset(ev_o, sec.evaluation(), orig.name, sec.name)
        write_csv(cross, out / "families_cross_dataset.csv")
        summ = families.summarise_flips(cross)
        t = _out(tables_dir, "families_cross_dataset")
        write_table(summ, t["csv"], t["md"], t["tex"], caption=f"Systems whose comparison between {orig.name} and "
                    f"{sec.name} flips when raw metrics are replaced by chance-adjusted ones.", label="tab:flips")
    else:
        write_csv(pd.DataFrame(), out / "families_cross_dataset.csv")
        t = _out(tables_dir, "families_cross_dataset")
        write_table(pd.DataFrame({"note": ["no second dataset configured"]}), t["csv"], t["md"], t["tex"])
    depth_pub = pd.read_csv(complete["pooling_depth"])
    fam = families.family_columns(depth_pub, "micro")
    chosen = FAMILIES_DEPTH + [c for c in fam if c in REGISTRY and REGISTRY[c].family == "unified"]
    dt = study.depth_taus(depth_pub, [c for c in chosen if c in depth_pub], "published")
    write_csv(dt, out / "families_depth_taus.csv")
    figures.depth_taus(dt, list(dict.fromkeys(dt["Metric"])), out / "families_depth_taus.png",
                       out / "families_depth_taus.pdf", "τ with depth 0: raw, adjusted and unified micro metrics")
    grid, sens = families.umf_grid(pd.read_parquet(orig.files["per_answer"]), orig.kg.num_entities)
    write_csv(grid, out / "umf_grid.csv")
    write_csv(sens, out / "umf_sensitivity.csv")
    for wt in ("uniform", "frequency"):
        for axis in ("alpha", "p"):
            mat = families.sensitivity_matrix(sens, wt, axis)
            if not mat.empty:
                figures.heatmap(mat, out / f"umf_sensitivity_{wt}_{axis}.png", out / f"umf_sensitivity_{wt}_{axis}.pdf",
                                f"{orig.name}: τ to the next {axis} ({wt} entity weights)", "p", "α",
                                marks=families.UMF_MARKS, note=families.UMF_NOTE)


def reanalyze_tables(folder: str | Path, out: str | Path, names: dict[str, str] | None = None,
                     figure6_system: str = "HittER", shown_as: str | Path | None = None) -> list[str]:
    """Every τ analysis and figure that needs only per-system metric tables (:func:`kgeval.analysis.reanalyze.
    reanalyze`): the step of the rules ``reanalyze_own_tables`` / ``reanalyze_release`` and of ``kgeval
    reanalyze``. Returns the notes (what was skipped and why)."""
    from .reanalyze import reanalyze

    return reanalyze(folder, out, names, figure6_system=figure6_system, shown_as=shown_as)


# ---- the SIGIR study's data section: Table 2 as printed, the pool's statistics, top-10 shares ---------------
def table2_printed_step(kg: str, sample: str, complete: str, out_csv: str, out_md: str, out_tex: str,
                        answers_csv: str, sample_name: str, complete_name: str) -> None:
    """Table 2 as the paper prints it, each answer looked up in the data, beside today's automatic choice."""
    from .printed import table2_printed

    graph = KnowledgeGraph.load(kg)
    table, answers = table2_printed(TestSet.load(sample, graph, sample_name),
                                    TestSet.load(complete, graph, complete_name), graph)
    write_csv(answers, answers_csv)
    write_table(table, out_csv, out_md, out_tex, caption=f"Table 2 as printed (each answer with its "
                f"{complete_name} label) and the automatic choice from {sample_name}.", label="tab:examples-printed")
    log.info("table 2 as printed: %d of %d printed answers found in the data", int((answers["Label"] != "not in "
             "the data").sum()), len(answers))


def _release_table(path: str) -> pd.DataFrame:
    from .reanalyze import read_table

    return read_table(Path(path))


def pool_statistics_step(kg: str, complete: str, complete_name: str, human_labeled: str, filtered: str,
                         release: dict[str, str], out: dict[str, str]) -> None:
    """The pool's counts as the paper gives them, from the published files, and the release's top-10 shares
    (``release``: evaluation.csv of original, sample, complete; ``out``: the files stats, stats_md, stats_tex,
    shares, shares_md, shares_tex)."""
    from .pool_statistics import pool_statistics, release_shares

    graph = KnowledgeGraph.load(kg)
    stats = pool_statistics(TestSet.load(complete, graph, complete_name), human_labeled, filtered)
    write_table(stats, out["stats"], out["stats_md"], out["stats_tex"], caption="The pool's statistics as the "
                "paper gives them (Section 3.1) and as the published files count them.", label="tab:pool")
    shares = release_shares(*(_release_table(release[r]) for r in ("original", "sample", "complete")))
    write_table(shares, out["shares"], out["shares_md"], out["shares_tex"], caption="Share of positives in the "
                "top 10 from the authors' release (P@10) beside the paper's printed shares for its models L, A "
                "and D.", label="tab:release-top10")
    log.info("pool statistics: %s", stats[["Statistic", "Paper", "Data"]].to_dict("records"))


def top10_shares_step(kg: str, complete: str, complete_name: str, dumps: dict[str, str], release_original: str,
                      out_csv: str, out_md: str, out_tex: str) -> None:
    """Share of positives (original and added) in every system's top 10 on the sampled questions, from the
    score dumps on the completed test set, beside the paper's shares for its models L, A and D."""
    from ..scores.dumps import load_dump
    from .pool_statistics import paper_codes, shares_beside_paper, top10_shares

    graph = KnowledgeGraph.load(kg)
    ts = TestSet.load(complete, graph, complete_name)
    rows = []
    for system, folder in dumps.items():
        d = load_dump(folder)
        q = d.questions
        rows.append({"System": system, **top10_shares(d.run_entity[:, :10], q.side, q.entity, q.relation, ts,
                                                      graph.num_entities, graph.num_relations)})
    table = shares_beside_paper(pd.DataFrame(rows), paper_codes(_release_table(release_original)))
    write_table(table, out_csv, out_md, out_tex, caption=f"Share of positives in each system's top 10 on the "
                f"sampled questions, judged by {complete_name} (original and added by the pooling), beside the "
                "paper's models L, A and D.", label="tab:top10-shares")
