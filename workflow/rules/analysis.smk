# Analysis stage: Kendall's tau between system rankings (Figures 2-6, Tables 2-4), stability under
# subsampling (Figure 7) and discriminative power (Figure 8), from the metric tables and per-item scores.


include: "helpers/analysis.smk"


rule analysis_rankings:
    input:
        get_analysis_inputs(["original", "sample", "complete"]),
        unpack(get_bounds_overlay),
    output:
        figure3=report(
            FIGURE3,
            caption="../report/figure3.rst",
            category="4. Label sparsity",
        ),
        figure3_pdf="results/analysis/figure3.pdf",
        figure3_csv="results/analysis/figure3.csv",
        codes="results/analysis/system_codes.csv",
        figure4=report(
            "results/analysis/figure4.png",
            caption="../report/figure4.rst",
            category="4. Label sparsity",
        ),
        figure4_pdf="results/analysis/figure4.pdf",
        figure4_csv=FIGURE4_CSV,
        figure5=report(
            "results/analysis/figure5.png",
            caption="../report/figure5.rst",
            category="4. Label sparsity",
        ),
        figure5_pdf="results/analysis/figure5.pdf",
        figure5_csv=FIGURE5_CSV,
        table3=report(
            "results/tables/table3.csv",
            caption="../report/table3.rst",
            category="4. Label sparsity",
        ),
        table3_md="results/tables/table3.md",
        table3_tex="results/tables/table3.tex",
        table3_long="results/analysis/table3_long.csv",
        table4=report(
            TABLE4,
            caption="../report/table4.rst",
            category="4. Label sparsity",
        ),
        table4_md="results/tables/table4.md",
        table4_tex="results/tables/table4.tex",
        figure2=report(
            "results/analysis/figure2.png",
            caption="../report/figure2.rst",
            category="1. Data",
        ),
        figure2_pdf="results/analysis/figure2.pdf",
        figure2_dist="results/analysis/figure2_distribution.csv",
        figure2_kl=report(
            FIGURE2_KL,
            caption="../report/figure2_kl.rst",
            category="1. Data",
        ),
        figure6=report(
            "results/analysis/figure6.png",
            caption="../report/figure6.rst",
            category="4. Label sparsity",
        ),
        figure6_pdf="results/analysis/figure6.pdf",
        figure6_csv=FIGURE6_CSV,
        table2=report(
            "results/tables/table2.csv",
            caption="../report/table2.rst",
            category="1. Data",
        ),
        table2_md="results/tables/table2.md",
        table2_tex="results/tables/table2.tex",
        incomplete=report(
            "results/analysis/incomplete_judgments.csv",
            caption="../report/incomplete.rst",
            category="6. Beyond the paper",
        ),
        incomplete_tau="results/analysis/incomplete_judgments_tau.csv",
        claim_taus=CLAIM_TAUS,
    log:
        "logs/analysis_rankings.log",
    benchmark:
        "logs/benchmarks/analysis_rankings.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        roles=get_ranking_roles,
        settings=config["analysis"],
    script:
        "../scripts/analysis_rankings.py"


rule analysis_stability:
    input:
        get_analysis_inputs(["original", "second", "complete"]),
    output:
        figure=report(
            FIGURE7,
            caption="../report/figure7.rst",
            category="5. Metrics: stability and discriminative power",
        ),
        pdf="results/analysis/figure7.pdf",
        families=report(
            "results/analysis/figure7_families.png",
            caption="../report/figure7_families.rst",
            category="7. Metric families",
        ),
        families_pdf="results/analysis/figure7_families.pdf",
        taus="results/analysis/figure7_taus.csv",
        summary=report(
            FIGURE7_SUMMARY,
            caption="../report/figure7_summary.rst",
            category="5. Metrics: stability and discriminative power",
        ),
    log:
        "logs/analysis_stability.log",
    benchmark:
        "logs/benchmarks/analysis_stability.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        test_sets=get_study_test_sets,
        settings=config["analysis"],
    script:
        "../scripts/analysis_stability.py"


rule analysis_discrimination:
    input:
        get_analysis_inputs(["original", "second", "complete"]),
    output:
        figure=report(
            FIGURE8,
            caption="../report/figure8.rst",
            category="5. Metrics: stability and discriminative power",
        ),
        pdf="results/analysis/figure8.pdf",
        families=report(
            "results/analysis/figure8_families.png",
            caption="../report/figure8_families.rst",
            category="7. Metric families",
        ),
        families_pdf="results/analysis/figure8_families.pdf",
        pvalues="results/analysis/figure8_pvalues.csv",
        summary=report(
            FIGURE8_SUMMARY,
            caption="../report/figure8_summary.rst",
            category="5. Metrics: stability and discriminative power",
        ),
    log:
        "logs/analysis_discrimination.log",
    benchmark:
        "logs/benchmarks/analysis_discrimination.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        test_sets=get_study_test_sets,
        settings=config["analysis"],
    script:
        "../scripts/analysis_discrimination.py"


rule analysis_families:
    input:
        get_analysis_inputs(["original", "second", "complete"]),
    output:
        within=report(
            "results/analysis/families_within_testset.csv",
            caption="../report/families_within.rst",
            category="7. Metric families",
        ),
        cross="results/analysis/families_cross_dataset.csv",
        flips=report(
            "results/tables/families_cross_dataset.csv",
            caption="../report/families_cross.rst",
            category="7. Metric families",
        ),
        flips_md="results/tables/families_cross_dataset.md",
        flips_tex="results/tables/families_cross_dataset.tex",
        depth=report(
            "results/analysis/families_depth_taus.png",
            caption="../report/families_depth.rst",
            category="7. Metric families",
        ),
        depth_pdf="results/analysis/families_depth_taus.pdf",
        depth_csv="results/analysis/families_depth_taus.csv",
        grid=UMF_GRID,
        sensitivity="results/analysis/umf_sensitivity.csv",
        heatmaps=report(
            expand(
                "results/analysis/umf_sensitivity_{weighting}_{axis}.png",
                weighting=["uniform", "frequency"],
                axis=["alpha", "p"],
            ),
            caption="../report/umf_heatmap.rst",
            category="7. Metric families",
        ),
        heatmaps_pdf=expand(
            "results/analysis/umf_sensitivity_{weighting}_{axis}.pdf",
            weighting=["uniform", "frequency"],
            axis=["alpha", "p"],
        ),
    log:
        "logs/analysis_families.log",
    benchmark:
        "logs/benchmarks/analysis_families.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        roles=get_family_roles,
    script:
        "../scripts/analysis_families.py"


rule reanalyze_own_tables:
    input:
        get_reanalysis_inputs,
    output:
        notes=REANALYSIS_OWN,
    log:
        "logs/reanalyze_own_tables.log",
    benchmark:
        "logs/benchmarks/reanalyze_own_tables.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        folder="results/metrics",
        names=STUDY,
    script:
        "../scripts/reanalyze.py"


rule reanalyze_release:
    input:
        get_release_tables,
    output:
        notes=report(
            REANALYSIS_RELEASE,
            caption="../report/reanalysis_release.rst",
            category="4. Label sparsity",
        ),
    log:
        "logs/reanalyze_release.log",
    benchmark:
        "logs/benchmarks/reanalyze_release.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        folder=release_folder(),
        names={},
    script:
        "../scripts/reanalyze.py"


rule table2_printed:
    input:
        unpack(get_printed_inputs),
    output:
        table=report(
            TABLE2_PRINTED,
            caption="../report/table2_printed.rst",
            category="1. Data",
        ),
        md="results/tables/table2_printed.md",
        tex="results/tables/table2_printed.tex",
        answers="results/analysis/table2_printed_answers.csv",
    log:
        "logs/table2_printed.log",
    benchmark:
        "logs/benchmarks/table2_printed.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        sample=STUDY["sample"],
        complete=STUDY["complete"],
    script:
        "../scripts/table2_printed.py"


rule pool_statistics:
    input:
        unpack(get_pool_statistics_inputs),
    output:
        stats=report(
            POOL_STATISTICS,
            caption="../report/pool_statistics.rst",
            category="1. Data",
        ),
        stats_md="results/tables/pool_statistics.md",
        stats_tex="results/tables/pool_statistics.tex",
        shares=report(
            "results/tables/release_top10_shares.csv",
            caption="../report/release_top10_shares.rst",
            category="1. Data",
        ),
        shares_md="results/tables/release_top10_shares.md",
        shares_tex="results/tables/release_top10_shares.tex",
    log:
        "logs/pool_statistics.log",
    benchmark:
        "logs/benchmarks/pool_statistics.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        complete=STUDY["complete"],
    script:
        "../scripts/pool_statistics.py"


rule top10_shares:
    input:
        unpack(get_top10_inputs),
    output:
        table=report(
            TOP10_SHARES,
            caption="../report/top10_shares.rst",
            category="4. Label sparsity",
        ),
        md="results/tables/top10_shares.md",
        tex="results/tables/top10_shares.tex",
    log:
        "logs/top10_shares.log",
    benchmark:
        "logs/benchmarks/top10_shares.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        complete=STUDY["complete"],
    script:
        "../scripts/top10_shares.py"


# the release's re-analysis only where the config names the pinned release or a folder
add_final_outputs(
    [FIGURE3, FIGURE7, FIGURE8, UMF_GRID, REANALYSIS_OWN]
    + ([REANALYSIS_RELEASE] if config["analysis"]["reanalyze"] else [])
)
# the paper's data section only where the completed test set carries the published pool files
add_final_outputs(
    [TABLE2_PRINTED, POOL_STATISTICS, TOP10_SHARES] if sigir_dataset() else []
)
